import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkAnthropicConversation } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LoopbackCli, SDK_FLAGS, userLine } from './loopback-cli.test-helper.js';

const SCHEMA = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false };

let cli: LoopbackCli;
beforeEach(async () => {
  cli = await LoopbackCli.start();
});
afterEach(() => cli.close());

/** The stored session's chat messages (the JSONL store's `message` lines). */
function storedMessages(): Array<Record<string, any>> {
  const files = cli.sessionFiles();
  expect(files).toHaveLength(1);
  return readFileSync(files[0]!, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((entry) => entry.type === 'message')
    .map((entry) => entry.message as Record<string, any>);
}

// The accepted StructuredOutput call ends the turn through an abort (no further model call):
// the stored turn must still be whole, so that `--resume` sends a conversation the API accepts.
describe('--json-schema: a turn ended at the accepted StructuredOutput call', () => {
  it('is stored with the call and a result for every tool call of its reply, and a resumed session sends a valid conversation', async () => {
    // StructuredOutput between two other calls: the one after it is not run, yet answered.
    cli.server.reply({
      text: ['Counting.'],
      toolCalls: [
        { id: 'toolu_read', name: 'Read', input: { file_path: join(cli.workspace, 'missing.txt') } },
        { id: 'toolu_structured', name: 'StructuredOutput', input: { answer: 42 } },
        { id: 'toolu_glob', name: 'Glob', input: { pattern: '*' } },
      ],
    });
    const first = await cli.run(['-p', 'how many?', '--output-format', 'json', '--allowedTools', 'Read', 'Glob', '--json-schema', JSON.stringify(SCHEMA)]);
    expect(first.code, first.stderr).toBe(0);
    const result = JSON.parse(first.stdout);
    expect(result).toMatchObject({ subtype: 'success', structured_output: { answer: 42 } });

    const stored = storedMessages();
    const call = stored.find((message) => message.role === 'assistant');
    expect(call).toMatchObject({ stopReason: 'toolUse', content: expect.arrayContaining([expect.objectContaining({ type: 'toolCall', id: 'toolu_structured', name: 'StructuredOutput' })]) });
    expect(JSON.stringify(stored)).not.toContain('interrupted');
    const results = stored.filter((message) => message.role === 'toolResult');
    expect(results.map((message) => message.toolCallId)).toEqual(['toolu_read', 'toolu_structured', 'toolu_glob']);
    expect(results[1]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'Structured output accepted.' }] });

    cli.server.reply({ text: ['Next.'] });
    const next = await cli.run(['-r', result.session_id, '-p', 'next', '--output-format', 'json']);
    expect(next.code, next.stderr + next.stdout).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ subtype: 'success', result: 'Next.' });
    const body = cli.server.bodies.at(-1)!;
    expect(checkAnthropicConversation(body)).toEqual([]);
    expect(JSON.stringify(body)).toContain('Structured output accepted.');
  }, 60_000);

  it('the same in the Agent SDK mode (stream-json input), then resumed with -r -p', async () => {
    cli.server.reply({ toolCalls: [{ id: 'toolu_structured', name: 'StructuredOutput', input: { answer: 1 } }] });
    const sdk = await cli.run([...SDK_FLAGS, '--json-schema', JSON.stringify(SCHEMA)], userLine('count'));
    expect(sdk.code, sdk.stderr).toBe(0);
    const result = sdk.out.find((message) => message.type === 'result')!;
    expect(result).toMatchObject({ subtype: 'success', structured_output: { answer: 1 } });

    cli.server.reply({ text: ['Next.'] });
    const next = await cli.run(['-r', result.session_id, '-p', 'next', '--output-format', 'json']);
    expect(next.code, next.stderr + next.stdout).toBe(0);
    expect(checkAnthropicConversation(cli.server.bodies.at(-1))).toEqual([]);
  }, 60_000);
});
