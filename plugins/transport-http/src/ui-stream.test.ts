import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { UiStreamMapper, type UIChunk } from './ui-stream.js';

/** The chunks as SSE, read by the AI SDK's own schema and reader (which refuses a delta for a call it never saw start). */
async function finalMessage(chunks: readonly UIChunk[]): Promise<UIMessage> {
  const sse = new Response(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')).body!;
  const stream = parseJsonEventStream({ stream: sse, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        if (!part.success) throw part.error;
        controller.enqueue(part.value as UIMessageChunk);
      },
    }),
  );
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, onError: (error) => { throw error; } })) last = message;
  return last!;
}

describe('UiStreamMapper', () => {
  it('streams a tool call’s input as tool-input-delta parts between its start and tool-input-available', async () => {
    const chunks: UIChunk[] = [];
    const mapper = new UiStreamMapper((chunk) => chunks.push(chunk), 'msg_1');
    mapper.start();
    mapper.sessionEvent({ type: 'text_delta', round: 1, delta: 'Reading.' });
    mapper.sessionEvent({ type: 'tool_input_delta', round: 1, toolCallId: 't1', toolName: 'Read', delta: '{"file_path":' });
    mapper.sessionEvent({ type: 'tool_input_delta', round: 1, toolCallId: 't1', toolName: 'Read', delta: '"/w/a.txt"}' });
    mapper.sessionEvent({ type: 'tool_start', round: 1, toolCallId: 't1', toolName: 'Read', input: { file_path: '/w/a.txt' } });
    mapper.toolEnd({ toolCallId: 't1', toolName: 'Read', firstArg: '/w/a.txt', isRunning: false, result: 'success' });
    // A call whose input did not stream still opens at its start.
    mapper.sessionEvent({ type: 'tool_start', round: 1, toolCallId: 't2', toolName: 'Read', input: { file_path: '/w/b.txt' } });
    mapper.toolEnd({ toolCallId: 't2', toolName: 'Read', firstArg: '/w/b.txt', isRunning: false, result: 'success' });
    mapper.finish();

    expect(chunks.map((chunk) => chunk.type)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-delta',
      'tool-input-available',
      'tool-output-available',
      'tool-input-start',
      'tool-input-available',
      'tool-output-available',
      'finish-step',
      'finish',
    ]);
    const message = await finalMessage(chunks);
    const tools = message.parts.filter((part) => part.type === 'dynamic-tool' || part.type.startsWith('tool-')) as Array<{ toolCallId: string; state: string; input: unknown }>;
    expect(tools.map((part) => [part.toolCallId, part.state, part.input])).toEqual([
      ['t1', 'output-available', { file_path: '/w/a.txt' }],
      ['t2', 'output-available', { file_path: '/w/b.txt' }],
    ]);
  });
});
