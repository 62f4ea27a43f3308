import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionLogData, Tool } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSessionLogger, readSessionLog, sessionLogger } from './index.js';
import { fake, SHAPES } from './fake-credentials.test-helper.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-logger-secrets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The log file and every payload file of a session, as text. */
async function written(sessionId: string): Promise<{ log: string; payloads: string[] }> {
  const log = await readFile(join(dir, `${sessionId}.jsonl`), 'utf8');
  const payloadDir = join(dir, `${sessionId}.payloads`);
  const payloads = existsSync(payloadDir) ? await Promise.all((await readdir(payloadDir)).map((name) => readFile(join(payloadDir, name), 'utf8'))) : [];
  return { log, payloads };
}

/** The seven reproduced leaks: a secret in the text around it, and the part that identifies it. */
const REPRODUCED = [
  { name: 'tool result printing ANTHROPIC_API_KEY=sk-ant-api03-…', text: `$ env\nANTHROPIC_API_KEY=${SHAPES.anthropic.secret}\nHOME=/home/dev\n`, secret: SHAPES.anthropic.secret },
  { name: 'OpenAI sk-proj-…', text: `client = OpenAI(api_key="${SHAPES.openaiProject.secret}")`, secret: SHAPES.openaiProject.secret },
  { name: 'AWS AKIA… quoted in a model reply', text: `Your access key id is ${SHAPES.awsAccessKeyId.secret}, keep it safe.`, secret: SHAPES.awsAccessKeyId.secret },
  { name: 'prompt with a GitHub ghp_… token', text: `push with ${SHAPES.githubClassic.secret} please`, secret: SHAPES.githubClassic.secret },
  { name: 'Slack xoxb-…', text: `bot token: ${SHAPES.slackBot.secret}`, secret: SHAPES.slackBot.secret },
  { name: 'a JWT', text: `the session cookie holds ${SHAPES.jwt.secret} today`, secret: SHAPES.jwt.secret },
  { name: 'https://user:password@host', text: 'cloning https://deploy:Tr0ub4dor-and-3@git.example.com/app.git', secret: 'Tr0ub4dor-and-3' },
];

/** A substring that identifies each secret (its last 12 characters) and must appear nowhere. */
const identifying = (secret: string): string => secret.slice(-12);

describe('FileSessionLogger redacts credentials in free text', () => {
  for (const leak of REPRODUCED) {
    it(`${leak.name}: absent from the log and the payload files`, async () => {
      const logger = new FileSessionLogger({ dir, externalPayloadThresholdBytes: 1_024 });
      const id = 'leak';
      const padding = 'p'.repeat(2_000);
      // A flat record (single native stringify path) …
      logger.log(id, 'pre_run', { input: leak.text, n: 1 });
      // … a nested record (general path) …
      logger.log(id, 'tool_execution_result', { toolName: 'bash', output: leak.text, metadata: { stdout: [leak.text] }, round: 1 });
      // … a field over the threshold (an external payload file) …
      logger.log(id, 'history_mutation', { mutation: 'append_message', entry: { data: { role: 'tool', content: `${padding}${leak.text}${padding}` } } });
      // … an error message and a key …
      logger.log(id, 'provider_error', { error: new Error(`request failed: ${leak.text}`), seen: { [leak.text]: true } });
      // … and streamed chunks on the fast path, the secret cut in the middle.
      const cut = leak.text.indexOf(leak.secret) + Math.floor(leak.secret.length / 2);
      const chunks = [leak.text.slice(0, cut), leak.text.slice(cut), ' end'];
      chunks.forEach((delta, sequence) => {
        const data = { sequence, delta, round: 1, executionId: 'exec-1' };
        logger.log(id, 'provider_stream_raw_delta', data);
        logger.log(id, 'text_delta', data);
      });
      await logger.flush();

      const { log, payloads } = await written(id);
      expect(payloads.length).toBeGreaterThan(0);
      for (const text of [log, ...payloads]) {
        expect(text).not.toContain(identifying(leak.secret));
        expect(text).toContain('[REDACTED:');
      }
      // The lines are still well-formed and the text around the secret is kept.
      const { value: entries, diagnostics } = await readSessionLog(dir, id);
      expect(diagnostics).toEqual([]);
      expect(entries.filter((entry) => entry.event === 'text_delta').map((entry) => entry.sequence)).toEqual([0, 1, 2]);
      expect(entries.find((entry) => entry.event === 'text_delta' && entry.sequence === 2)!.delta).toBe(' end');
    });
  }

  it('provider stream events split a secret across events: redacted in each, per string path', async () => {
    const logger = new FileSessionLogger({ dir });
    const secret = SHAPES.githubFineGrained.secret;
    const text = `token=${secret} done`;
    const pieces = [text.slice(0, 15), text.slice(15, 40), text.slice(40, 70), text.slice(70)];
    for (const piece of pieces) {
      logger.log('raw', 'provider_native_raw_payload', {
        provider: 'anthropic',
        payloadKind: 'stream_event',
        payload: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } },
        round: 1,
        executionId: 'e',
      });
    }
    await logger.flush();
    const { log } = await written('raw');
    for (let at = 0; at + 8 <= secret.length; at++) expect(log).not.toContain(secret.slice(at, at + 8));
    expect(log).toContain('content_block_delta');
  });

  it('ordinary deltas keep the fast path and are written unchanged', async () => {
    const logger = new FileSessionLogger({ dir, now: () => 0 });
    const deltas = ['Here are the ', 'inputTokens: 12 ', 'and commit 3f786850e387550fdab836ed7e6dc881de23001b ', `uuid ${'123e4567-e89b-12d3-a456-426614174000'}`];
    deltas.forEach((delta, sequence) => logger.log('plain', 'text_delta', { sequence, delta, round: 1, executionId: 'e' }));
    await logger.flush();
    const lines = (await readFile(logger.getLogPath('plain'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { delta: string });
    expect(lines.map((line) => line.delta)).toEqual(deltas);
  });
});

describe('a Session turn with credentials in prompt, tool output and streamed reply', () => {
  it('writes none of them, wherever the logger puts them', async () => {
    const awsKey = `AKIA${fake(16, 77, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`;
    const reply = `The key is ${awsKey} and the token is ${SHAPES.githubClassic.secret}.`;
    // Small chunks: every secret is split across several deltas.
    const chunks = reply.match(/.{1,7}/gs)!;
    const printenv: Tool = {
      name: 'printenv',
      description: 'prints the environment',
      parameters: { type: 'object' },
      execute: async () => ({ success: true, output: `ANTHROPIC_API_KEY=${SHAPES.anthropic.secret}\nOPENAI_API_KEY=${SHAPES.openaiProject.secret}\n${'x'.repeat(40_000)}` }),
    };
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'printenv', input: {} }] }, { text: chunks }] });
    const kernel = await createKernel({ plugins: testPreset({ provider, replace: [sessionLogger({ dir })] }) });
    const session = kernel.createSession({ sessionId: 'turn', tools: [printenv] });
    await session.run(`deploy with ${SHAPES.slackBot.secret} and https://ci:S3cr3t-Pass@ci.example.com`);
    await kernel.shutdown();

    const { log, payloads } = await written('turn');
    expect(payloads.length).toBeGreaterThan(0);
    for (const secret of [awsKey, SHAPES.githubClassic.secret, SHAPES.anthropic.secret, SHAPES.openaiProject.secret, SHAPES.slackBot.secret, 'S3cr3t-Pass']) {
      for (const text of [log, ...payloads]) expect(text).not.toContain(identifying(secret));
    }
    // The streamed chunks are logged one by one, each with its secret part redacted.
    const deltas = (await readSessionLog(dir, 'turn')).value.filter((entry) => entry.event === 'text_delta' && entry.round === 2);
    expect(deltas).toHaveLength(chunks.length);
    const streamedText = deltas.map((entry) => entry.delta).join('');
    expect(streamedText).toMatch(/^The key is .*\[REDACTED:aws-access-key-id\].* and the token is .*\[REDACTED:github-token\]\.$/);
    expect(streamedText).not.toContain(awsKey.slice(4, 12));
    // The accumulated reply, logged whole in the response events, is redacted as a whole.
    const response = (await readSessionLog(dir, 'turn')).value.find((entry) => entry.event === 'provider_response_normalized' && entry.round === 2)!;
    expect(JSON.stringify(response.message)).toContain('The key is [REDACTED:aws-access-key-id] and the token is [REDACTED:github-token].');
  });

  it('a record that needs no redaction is written exactly as JSON.stringify would', async () => {
    const logger = new FileSessionLogger({ dir, now: () => 0 });
    const data: SessionLogData = { text: 'nothing secret here', count: 2, nested: { inputTokens: 5, sha: '3f786850e387550fdab836ed7e6dc881de23001b' } };
    logger.log('same', 'custom', data);
    await logger.flush();
    expect(await readFile(logger.getLogPath('same'), 'utf8')).toBe(`${JSON.stringify({ timestamp: new Date(0).toISOString(), sessionId: 'same', event: 'custom', ...data })}\n`);
  });
});
