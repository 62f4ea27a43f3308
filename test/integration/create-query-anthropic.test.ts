import { createQuery, defineTool, toolsPlugin, type QueryMessage } from '@tessera/kernel';
import { anthropicProvider } from '@tessera/plugin-provider-anthropic';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

// createQuery end to end over the real Anthropic SDK, against a loopback server that speaks
// the Messages API's SSE wire format.
let server: FakeAnthropicServer;
beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
});
afterEach(() => server.close());

describe('createQuery with the Anthropic provider', () => {
  it('streams text, runs a tool, and reports exact usage in the result', async () => {
    const lookup = defineTool({
      name: 'Lookup',
      description: 'looks a word up',
      inputSchema: z.object({ word: z.string() }),
      execute: ({ word }) => ({ success: true, output: `${word}: a greeting` }),
    });
    server.reply(
      { text: ['Let me ', 'check.'], toolCalls: [{ id: 'toolu_1', name: 'Lookup', input: { word: 'hello' } }], usage: { input_tokens: 40, output_tokens: 12 } },
      { text: ['It is ', 'a greeting.'], usage: { input_tokens: 70, output_tokens: 6 } },
    );
    const plugins = testPreset({ replace: [anthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL, sleep: async () => {} })], plugins: [toolsPlugin(lookup)] });
    const messages: QueryMessage[] = [];
    for await (const message of createQuery({ prompt: 'What is hello?', plugins, cwd: process.cwd() })) messages.push(message);

    const text = messages.flatMap((message) => (message.type === 'text_delta' ? [message.delta] : [])).join('');
    expect(text).toBe('Let me check.It is a greeting.');
    expect(messages.filter((message) => message.type === 'tool_end')).toEqual([{ type: 'tool_end', tool: expect.objectContaining({ toolName: 'Lookup', firstArg: 'hello', result: 'success' }) }]);
    const result = messages.at(-1)!;
    expect(result).toMatchObject({ type: 'result', subtype: 'success', text: 'It is a greeting.', turns: 2, usage: { kind: 'exact', promptTokens: 110, completionTokens: 18 } });
    expect(server.requests).toHaveLength(2);
    // The second request carries the tool result back to the model.
    expect(JSON.stringify(server.requests[1]!.body)).toContain('hello: a greeting');
  });

  it('an API error ends the query with an error result naming it', async () => {
    server.fail(400, { message: 'bad request: max_tokens too large' });
    const plugins = testPreset({ replace: [anthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL, sleep: async () => {}, maxRetries: 0 })] });
    const messages: QueryMessage[] = [];
    for await (const message of createQuery({ prompt: 'hi', plugins, cwd: process.cwd() })) messages.push(message);
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'error', error: { message: expect.stringContaining('max_tokens too large') } });
  });
});
