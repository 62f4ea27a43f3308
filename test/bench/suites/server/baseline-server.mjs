// The baseline: a hand-written Hono SSE endpoint that streams the same scripted answer (the same
// parts, as the UI message stream) with no framework behind it — the physical limit here.
import { randomUUID } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { ANSWER, TOKEN } from './script.mjs';

const app = new Hono();
app.post('/v1/sessions', (c) => (c.req.header('authorization') === `Bearer ${TOKEN}` ? c.json({ id: randomUUID() }, 201) : c.json({}, 401)));
app.post('/v1/sessions/:id/messages', async (c) => {
  await c.req.json();
  c.header('x-vercel-ai-ui-message-stream', 'v1');
  return streamSSE(c, async (stream) => {
    const send = (part) => stream.writeSSE({ data: JSON.stringify(part) });
    await send({ type: 'start', messageId: randomUUID() });
    await send({ type: 'start-step' });
    const first = randomUUID();
    await send({ type: 'text-start', id: first });
    for (const delta of ['Reading ', 'three ', 'files.']) await send({ type: 'text-delta', id: first, delta });
    await send({ type: 'text-end', id: first });
    for (const name of ['a.txt', 'b.txt', 'c.txt']) {
      const toolCallId = randomUUID();
      await send({ type: 'tool-input-start', toolCallId, toolName: 'Read' });
      await send({ type: 'tool-input-available', toolCallId, toolName: 'Read', input: { file_path: `/tmp/${name}` } });
      await send({ type: 'tool-output-available', toolCallId, output: { summary: name, output: `${name}\n` } });
    }
    await send({ type: 'finish-step' });
    await send({ type: 'start-step' });
    const second = randomUUID();
    await send({ type: 'text-start', id: second });
    for (const delta of ANSWER) await send({ type: 'text-delta', id: second, delta });
    await send({ type: 'text-end', id: second });
    await send({ type: 'finish-step' });
    await send({ type: 'finish', finishReason: 'stop' });
    await stream.writeSSE({ data: '[DONE]' });
  });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.stdout.write(`http://127.0.0.1:${info.port}\n`));
process.stdin.on('data', () => process.stdout.write(`${JSON.stringify({ rss: process.memoryUsage.rss() })}\n`));
process.stdin.on('end', () => server.close(() => process.exit(0)));
process.stdin.resume();
