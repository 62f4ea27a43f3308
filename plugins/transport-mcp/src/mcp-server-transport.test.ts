import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResultBlock } from '@tessera/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { eventOf, startMcpHost, textOf, type McpHost } from './mcp-server.test-helper.js';
import type { PromptOutput } from './mcp-tool-schemas.js';
import { commandModulePlugin } from '@tessera/plugin-commands';
import type { ISystemCommand } from '@tessera/contracts';

let host: McpHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

/** The tool results the model was sent with its last request. */
function lastToolResults(current: McpHost): ToolResultBlock[] {
  const messages = current.provider.requests.at(-1)?.messages ?? [];
  return messages.filter((message) => message.role === 'tool').flatMap((message) => message.content as ToolResultBlock[]);
}

function resultText(block: ToolResultBlock | undefined): string {
  if (!block) return '';
  return typeof block.content === 'string' ? block.content : block.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

describe('the MCP server transport over Streamable HTTP', () => {
  it('lists prompt, abort and one tool per model-invocable command', async () => {
    host = await startMcpHost();
    const client = await host.client();
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['prompt', 'abort', 'command_compact', 'command_context']));
    expect(names).not.toContain('command_clear');
    const prompt = tools.find((tool) => tool.name === 'prompt')!;
    expect(prompt.inputSchema.required).toEqual(['prompt']);
    expect(Object.keys(prompt.inputSchema.properties ?? {})).toEqual(['prompt', 'sessionId']);
    expect(prompt.outputSchema?.properties).toHaveProperty('sessionId');
    expect(client.getServerVersion()?.name).toBe('tessera-test');
  });

  it('streams the text as progress notifications and answers with the final text and the session id', async () => {
    host = await startMcpHost({ turns: [{ text: ['Hello ', 'from ', 'Tessera.'] }] });
    const client = await host.client();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'say hello' } }, undefined, { onprogress: (update) => progress.push(update) });
    expect(result.isError).toBeFalsy();
    const output = result.structuredContent as PromptOutput;
    expect(output).toEqual({ sessionId: host.opened[0]!.getSessionId(), response: 'Hello from Tessera.', stopReason: 'completed', toolCalls: [] });
    expect(textOf(result)).toContain('Hello from Tessera.');
    expect(textOf(result)).toContain(`Session: ${output.sessionId}`);
    const texts = progress.filter((update) => eventOf(update) === 'text_delta');
    expect(texts.map((update) => update.message)).toEqual(['Hello ', 'from ', 'Tessera.']);
    expect(progress.map((update) => update.progress)).toEqual(progress.map((_, index) => index + 1));
  });

  it('runs a turn with several tool calls and summarises them', async () => {
    host = await startMcpHost({
      rules: { allow: ['Bash(echo:*)'] },
      turns: [
        () => ({ text: 'Looking. ', toolCalls: [{ name: 'Read', input: { file_path: join(host!.dir, 'notes.md') } }, { name: 'Glob', input: { pattern: '*.md' } }] }),
        { toolCalls: [{ name: 'Bash', input: { command: 'echo checked', description: 'Say checked' } }] },
        { text: 'The notes say hi.' },
      ],
    });
    const notes = join(host.dir, 'notes.md');
    await writeFile(notes, 'hi\n');
    const client = await host.client();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'read the notes' } }, undefined, { onprogress: (update) => progress.push(update) });
    const output = result.structuredContent as PromptOutput;
    expect(output.response).toBe('The notes say hi.');
    expect(output.toolCalls).toEqual([
      { name: 'Read', target: notes, status: 'success' },
      { name: 'Glob', target: '*.md', status: 'success' },
      { name: 'Bash', target: 'echo checked', status: 'success' },
    ]);
    expect(textOf(result)).toContain(`Tool calls:\nRead(${notes}): success\nGlob(*.md): success\nBash(echo checked): success`);
    const events = progress.map((update) => eventOf(update));
    expect(events.filter((event) => event === 'tool_start')).toHaveLength(3);
    expect(events.filter((event) => event === 'tool_end')).toHaveLength(3);
    expect(progress.find((update) => eventOf(update) === 'tool_start')?.message).toContain(`Read(${notes})`);
  });

  it('continues a session by id', async () => {
    host = await startMcpHost({ turns: [{ text: 'First.' }, { text: 'Second.' }] });
    const client = await host.client();
    const first = (await client.callTool({ name: 'prompt', arguments: { prompt: 'one' } })).structuredContent as PromptOutput;
    const second = (await client.callTool({ name: 'prompt', arguments: { prompt: 'two', sessionId: first.sessionId } })).structuredContent as PromptOutput;
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.response).toBe('Second.');
    expect(host.opened).toHaveLength(1);
    const users = host.provider.requests[1]!.messages.filter((message) => message.role === 'user').map((message) => JSON.stringify(message.content));
    expect(users.join()).toContain('one');
    expect(users.join()).toContain('two');
  });

  it('stops a running turn with the abort tool and reports what it produced', async () => {
    host = await startMcpHost({ turns: [{ text: ['Working ', 'on ', 'it ', 'slowly ', 'forever.'], delayMs: 400 }, { text: 'Back.' }] });
    const client = await host.client();
    let sessionId: string | undefined;
    const first = new Promise<void>((resolve) => {
      const running = client.callTool({ name: 'prompt', arguments: { prompt: 'long job' } }, undefined, {
        onprogress: () => {
          sessionId ??= host!.opened[0]?.getSessionId();
          resolve();
        },
      });
      void running.then((result) => (outcome = result));
    });
    let outcome: Awaited<ReturnType<typeof client.callTool>> | undefined;
    await first;
    const stop = await client.callTool({ name: 'abort', arguments: { sessionId: sessionId! } });
    expect(textOf(stop)).toContain(`Stopping the turn in session ${sessionId}`);
    await expect.poll(() => outcome, { timeout: 5000 }).toBeDefined();
    const output = outcome!.structuredContent as PromptOutput;
    expect(output.stopReason).toBe('interrupted');
    expect(output.response).toBe('Working ');
    expect(textOf(outcome!)).toContain('The turn was aborted.');
    const next = await client.callTool({ name: 'prompt', arguments: { prompt: 'again', sessionId: sessionId! } });
    expect((next.structuredContent as PromptOutput).response).toBe('Back.');
  });

  it('aborts the turn when the client cancels the request', async () => {
    host = await startMcpHost({ turns: [{ text: ['Slow ', 'answer ', 'never ', 'ends.'], delayMs: 400 }, { text: 'Fresh.' }] });
    const client = await host.client();
    const controller = new AbortController();
    const call = client.callTool({ name: 'prompt', arguments: { prompt: 'long' } }, undefined, { signal: controller.signal, onprogress: () => controller.abort() });
    await expect(call).rejects.toThrow(/abort/i);
    const session = host.opened[0]!;
    await expect.poll(() => session.isExecuting(), { timeout: 5000 }).toBe(false);
    const next = await client.callTool({ name: 'prompt', arguments: { prompt: 'again', sessionId: session.getSessionId() } });
    expect((next.structuredContent as PromptOutput).response).toBe('Fresh.');
  });

  it('asks permission through elicitation when the client supports it', async () => {
    const messages: string[] = [];
    host = await startMcpHost({
      turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'echo approved', description: 'Echo' } }] }, { text: 'Ran it.' }],
    });
    const client = await host.client({
      answer: (message) => {
        messages.push(message);
        return { action: 'accept', content: { decision: 'allow' } };
      },
    });
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'echo' } });
    expect((result.structuredContent as PromptOutput).toolCalls).toEqual([{ name: 'Bash', target: 'echo approved', status: 'success' }]);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('Bash (echo approved)');
    expect(resultText(lastToolResults(host)[0])).toContain('approved');
  });

  it('tells the model the user denied a call through elicitation, with the reason', async () => {
    host = await startMcpHost({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'echo nope', description: 'Echo' } }] }, { text: 'Understood.' }] });
    const client = await host.client({ answer: () => ({ action: 'accept', content: { decision: 'deny', reason: 'not today' } }) });
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'echo' } });
    expect((result.structuredContent as PromptOutput).toolCalls[0]!.status).toBe('denied');
    expect(resultText(lastToolResults(host)[0])).toContain('The user denied Bash: not today');
  });

  it('denies a call that needs approval when the client cannot elicit, naming the rule to add', async () => {
    host = await startMcpHost({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'echo hi', description: 'Echo' } }] }, { text: 'Could not.' }] });
    const client = await host.client();
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'echo' } });
    const output = result.structuredContent as PromptOutput;
    expect(output.toolCalls).toEqual([{ name: 'Bash', target: 'echo hi', status: 'denied' }]);
    const told = resultText(lastToolResults(host)[0]);
    expect(told).toContain('cannot answer permission prompts');
    expect(told).toMatch(/add "Bash\(echo[^"]*\)" to permissions\.allow in \.tessera\/settings\.json/);
  });

  it('keeps sessions to the MCP session that started them', async () => {
    host = await startMcpHost({ turns: [{ text: 'Mine.' }] });
    const owner = await host.client();
    const other = await host.client();
    const { sessionId } = (await owner.callTool({ name: 'prompt', arguments: { prompt: 'hi' } })).structuredContent as PromptOutput;
    const stolen = await other.callTool({ name: 'prompt', arguments: { prompt: 'let me in', sessionId } });
    expect(stolen.isError).toBe(true);
    expect(textOf(stolen)).toContain(`No session "${sessionId}" in this MCP session`);
    const abort = await other.callTool({ name: 'abort', arguments: { sessionId } });
    expect(abort.isError).toBe(true);
    const command = await other.callTool({ name: 'command_context', arguments: { sessionId } });
    expect(command.isError).toBe(true);
    expect(host.provider.requests).toHaveLength(1);
  });

  it('answers bad arguments with an isError result that says what is wrong', async () => {
    host = await startMcpHost();
    const client = await host.client();
    const wrongType = await client.callTool({ name: 'prompt', arguments: { prompt: 42 } });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toMatch(/Invalid arguments for tool prompt/);
    expect(textOf(wrongType)).toContain('prompt');
    const missing = await client.callTool({ name: 'prompt', arguments: {} });
    expect(missing.isError).toBe(true);
    const badId = await client.callTool({ name: 'prompt', arguments: { prompt: 'hi', sessionId: '../../etc/passwd' } });
    expect(badId.isError).toBe(true);
    expect(textOf(badId)).toContain('is not a session id');
    const unknown = await client.callTool({ name: 'abort', arguments: { sessionId: 'no-such-session' } });
    expect(textOf(unknown)).toContain('No session "no-such-session"');
    expect(host.opened).toHaveLength(0);
  });

  it('runs a model-invocable command in the session the client used last', async () => {
    host = await startMcpHost({ turns: [{ text: 'Hi.' }] });
    const client = await host.client();
    const { sessionId } = (await client.callTool({ name: 'prompt', arguments: { prompt: 'hi' } })).structuredContent as PromptOutput;
    const result = await client.callTool({ name: 'command_context', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain(`Session: ${sessionId}`);
    expect(textOf(result)).toMatch(/context/i);
    expect(host.opened).toHaveLength(1);
  });

  it('runs command tools as a model asks, not as the user typing: user-only actions stay refused', async () => {
    const whoAsks: ISystemCommand = { name: 'whoasks', description: 'Says who invoked it', modelInvocable: true, safety: 'read-only', lifecycle: 'inline', execute: (context) => ({ success: true, message: `invoked by ${context.invocation}` }) };
    host = await startMcpHost({ turns: [{ text: 'Hi.' }], plugins: [commandModulePlugin('whoasks', [whoAsks])] });
    const client = await host.client();
    await client.callTool({ name: 'prompt', arguments: { prompt: 'hi' } });
    expect(textOf(await client.callTool({ name: 'command_whoasks', arguments: {} }))).toContain('invoked by model-tool');
    // /reset is the user's alone; it is not even offered as a tool.
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('command_reset');
  });
});
