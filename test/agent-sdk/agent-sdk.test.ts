import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  TESSERA_BIN,
  assertCliBuilt,
  blocksOf,
  collect,
  installAgentSdk,
  loadAgentSdk,
  toolResultText,
  toolResultsInRequest,
  type AgentSdk,
  type CanUseTool,
  type HookCallback,
  type HookInput,
  type QueryOptions,
  type SdkMessage,
  type SdkUserMessage,
} from './agent-sdk-harness.js';

// Acceptance: the real Claude Agent SDK drives the tessera CLI through
// `pathToClaudeCodeExecutable`, exactly as it drives Claude Code (stream-json on stdio plus the
// control protocol — see PROTOCOL.md). The model is a loopback fake Messages API.

let sdk: AgentSdk;
let server: FakeAnthropicServer;
let workspace: string;
let cwd: string;
let stderr: string[];

beforeAll(async () => {
  installAgentSdk();
  assertCliBuilt();
  sdk = await loadAgentSdk();
}, 300_000);

beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-agent-sdk-')));
  cwd = join(workspace, 'project');
  mkdirSync(cwd);
  mkdirSync(join(workspace, 'home'));
  stderr = [];
});

afterEach(async () => {
  await server.close();
  rmSync(workspace, { recursive: true, force: true });
});

function options(extra: Partial<QueryOptions>): QueryOptions {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: server.baseURL,
    HOME: join(workspace, 'home'),
    // Keeps Claude Code's side requests off the scripted queue when AGENT_SDK_CLI points at it.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  // Hermetic: no model or credentials leak in from the developer's shell.
  for (const name of ['ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_MODEL', 'XDG_CONFIG_HOME']) delete env[name];
  return { pathToClaudeCodeExecutable: TESSERA_BIN, cwd, env, stderr: (data) => stderr.push(data), ...extra };
}

/** Everything a failed assertion should show: the SDK's error, the CLI's stderr, the messages. */
function report(messages: SdkMessage[], error: unknown): string {
  return [`SDK error: ${error === undefined ? 'none' : String(error)}`, `CLI stderr: ${stderr.join('').slice(-2000)}`, `messages: ${JSON.stringify(messages, null, 1).slice(-6000)}`].join('\n');
}

/** Checks the envelope every transcript must have: init first, then session-stamped main-thread messages, then a result last. */
function expectWellFormed(messages: SdkMessage[], error: unknown, { errorResult = false } = {}): { sessionId: string; result: SdkMessage } {
  const context = report(messages, error);
  // An error result followed by a non-zero exit makes the SDK throw this after yielding the
  // result — Claude Code does exactly that for an interrupted turn once stdin closes.
  if (errorResult && error !== undefined) {
    expect(String(error), context).toMatch(/Claude Code returned an error result/);
    expect(messages.at(-1), context).toMatchObject({ type: 'result', is_error: true });
  } else {
    expect(error, context).toBeUndefined();
  }
  const init = messages[0];
  expect(init, context).toMatchObject({ type: 'system', subtype: 'init', session_id: expect.any(String), tools: expect.any(Array) });
  const sessionId = init!.session_id!;
  expect(sessionId.length, context).toBeGreaterThan(0);
  for (const message of messages.filter((each) => each.type === 'assistant' || each.type === 'user')) {
    expect(message, context).toMatchObject({ session_id: sessionId, parent_tool_use_id: null, message: expect.any(Object) });
  }
  const result = messages.at(-1)!;
  expect(result, context).toMatchObject({ type: 'result', session_id: sessionId, is_error: expect.any(Boolean), num_turns: expect.any(Number) });
  expect(messages.filter((message) => message.type === 'result'), context).toHaveLength(1);
  return { sessionId, result };
}

function toolUses(messages: SdkMessage[]): Array<Record<string, unknown>> {
  return messages.filter((message) => message.type === 'assistant').flatMap((message) => blocksOf(message.message?.content).filter((block) => block.type === 'tool_use'));
}

describe('the Claude Agent SDK driving the tessera CLI', () => {
  it('runs a multi-tool task: init first, canUseTool approves Write, PreToolUse hooks fire, success result last', async () => {
    const target = join(cwd, 'notes.txt');
    server.reply(
      { text: 'Checking where I am.', toolCalls: [{ id: 'toolu_pwd', name: 'Bash', input: { command: 'pwd' } }] },
      { toolCalls: [{ id: 'toolu_write', name: 'Write', input: { file_path: target, content: 'written through the agent sdk\n' } }] },
      { text: 'Wrote notes.txt.' },
    );
    const events: string[] = [];
    const permissionCalls: Array<{ toolName: string; input: Record<string, unknown>; toolUseID: string }> = [];
    const hookInputs: HookInput[] = [];
    const canUseTool: CanUseTool = async (toolName, input, { toolUseID }) => {
      events.push(`permission:${toolName}`);
      permissionCalls.push({ toolName, input, toolUseID });
      return { behavior: 'allow', updatedInput: input };
    };
    const preToolUse: HookCallback = async (input) => {
      events.push(`hook:${input.tool_name}`);
      hookInputs.push(input);
      return {};
    };

    const { messages, error } = await collect(sdk.query({ prompt: 'Find out where you are, then write notes.txt.', options: options({ canUseTool, hooks: { PreToolUse: [{ hooks: [preToolUse] }] } }) }));
    const context = report(messages, error);
    const { sessionId, result } = expectWellFormed(messages, error);

    expect(messages[0]!.tools, context).toEqual(expect.arrayContaining(['Bash', 'Write']));
    expect(result, context).toMatchObject({ subtype: 'success', is_error: false, result: 'Wrote notes.txt.' });
    expect(toolUses(messages).map((block) => [block.id, block.name]), context).toEqual([
      ['toolu_pwd', 'Bash'],
      ['toolu_write', 'Write'],
    ]);

    // canUseTool was consulted for the Write (default permission mode asks for edits), and its
    // allow let the call run.
    expect(permissionCalls.find((call) => call.toolName === 'Write'), context).toMatchObject({ toolUseID: 'toolu_write', input: { file_path: target } });
    expect(existsSync(target), context).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('written through the agent sdk\n');

    // The PreToolUse callback saw both calls, with Claude Code's input fields, before any permission prompt for them.
    expect(hookInputs.map((input) => input.tool_name), context).toEqual(['Bash', 'Write']);
    expect(hookInputs[0], context).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'pwd' }, tool_use_id: 'toolu_pwd', session_id: sessionId, cwd });
    expect(hookInputs[1], context).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: target }, tool_use_id: 'toolu_write' });
    expect(events.indexOf('hook:Write'), context).toBeLessThan(events.indexOf('permission:Write'));

    // The tool results went back to the model: `pwd` printed the working directory.
    expect(server.requests, context).toHaveLength(3);
    const pwd = toolResultsInRequest(server.requests[1]!.body).get('toolu_pwd');
    expect(pwd, context).toBeDefined();
    expect(toolResultText(pwd!)).toContain(cwd);
    const userResults = messages.filter((message) => message.type === 'user').flatMap((message) => blocksOf(message.message?.content)).filter((block) => block.type === 'tool_result');
    expect(userResults.map((block) => block.tool_use_id), context).toEqual(['toolu_pwd', 'toolu_write']);
  }, 60_000);

  it('a canUseTool deny keeps the file unwritten and its message reaches the model as the tool result', async () => {
    const target = join(cwd, 'denied.txt');
    const denial = 'Writing files is not allowed in this acceptance test.';
    server.reply({ toolCalls: [{ id: 'toolu_write', name: 'Write', input: { file_path: target, content: 'nope\n' } }] }, { text: 'Understood, I did not write it.' });
    const asked: string[] = [];
    const canUseTool: CanUseTool = async (toolName) => {
      asked.push(toolName);
      return { behavior: 'deny', message: denial };
    };

    const { messages, error } = await collect(sdk.query({ prompt: 'Write denied.txt.', options: options({ canUseTool }) }));
    const context = report(messages, error);
    const { result } = expectWellFormed(messages, error);

    expect(asked, context).toEqual(['Write']);
    expect(existsSync(target), context).toBe(false);
    expect(result, context).toMatchObject({ subtype: 'success', is_error: false, result: 'Understood, I did not write it.' });
    expect(server.requests, context).toHaveLength(2);
    const denied = toolResultsInRequest(server.requests[1]!.body).get('toolu_write');
    expect(denied, context).toMatchObject({ type: 'tool_result', is_error: true });
    expect(toolResultText(denied!)).toContain(denial);
  }, 60_000);

  it('interrupt() during a streaming-input Bash `sleep 5` ends the query promptly with a result', async () => {
    server.reply({ toolCalls: [{ id: 'toolu_sleep', name: 'Bash', input: { command: 'sleep 5' } }] });
    const prompt = async function* (): AsyncGenerator<SdkUserMessage> {
      yield { type: 'user', message: { role: 'user', content: 'Sleep for five seconds.' }, parent_tool_use_id: null, session_id: '' };
    };
    let interruptedAt: number | undefined;
    let interruptOutcome: Promise<unknown> | undefined;
    const canUseTool: CanUseTool = async (_toolName, input) => ({ behavior: 'allow', updatedInput: input });
    // The hook sees the Bash call just before it runs; interrupt once the sleep is under way.
    const preToolUse: HookCallback = async (input) => {
      if (input.tool_use_id === 'toolu_sleep') {
        setTimeout(() => {
          interruptedAt = Date.now();
          interruptOutcome = query.interrupt().then(
            () => 'answered',
            (error: unknown) => `rejected: ${String(error)}`,
          );
        }, 750);
      }
      return {};
    };
    const query = sdk.query({ prompt: prompt(), options: options({ canUseTool, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [preToolUse] }] } }) });

    const { messages, error } = await collect(query);
    const ended = Date.now();
    const context = report(messages, error);
    const { result } = expectWellFormed(messages, error, { errorResult: true });

    expect(interruptedAt, context).toBeDefined();
    expect(await interruptOutcome, context).toBe('answered');
    // `sleep 5` was cut short: it started ~750 ms before the interrupt, so finishing it would take ~4 s more.
    expect(ended - interruptedAt!, context).toBeLessThan(3_000);
    expect(messages.indexOf(result), context).toBe(messages.length - 1);
    // The interrupted call is closed in the transcript (an error tool_result), so the history stays valid.
    const closed = messages.filter((message) => message.type === 'user').flatMap((message) => blocksOf(message.message?.content)).find((block) => block.type === 'tool_result' && block.tool_use_id === 'toolu_sleep');
    expect(closed, context).toMatchObject({ is_error: true });
    // The interrupted turn makes no further model request.
    expect(server.requests, context).toHaveLength(1);
  }, 60_000);
});
