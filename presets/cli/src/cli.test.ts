import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer, TEST_TLS, TestProxy, TlsTerminator } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RecordingTerminal } from '@tessera/plugin-tui';
import { parseArgs } from './args.js';
import { driveStreamJson } from './loopback-cli.test-helper.js';
import { runInteractive } from './interactive/run-interactive.js';
import { runMainIn, type MainRun } from './run-main.test-helper.js';

// The CLI end to end: in-process through `main(argv, io)` for the output formats, and as real
// processes (the committed bin over the built dist) for sessions across processes, exit codes
// and the control protocol. The built-in demo model plays a real multi-tool task.

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');
const TASK_TOOLS = ['--allowedTools', 'Bash(pwd)', 'Glob', 'Read', 'Write'];

let home: string;
let workspace: string;

function makeWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-cli-ws-'));
  writeFileSync(join(dir, 'standup.md'), '# Standup\nShipped the kernel.\n');
  writeFileSync(join(dir, 'ideas.md'), '# Ideas\nA marketplace.\n');
  return dir;
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'tessera-cli-home-'));
  workspace = makeWorkspace();
});

const runMain = (argv: string[], env: Record<string, string> = {}, stdoutIsTTY = false): Promise<MainRun> => runMainIn({ cwd: workspace, home }, argv, env, stdoutIsTTY);

function runBin(argv: string[], options: { env?: Record<string, string>; input?: string; cwd?: string } = {}) {
  const result = spawnSync(process.execPath, [BIN, ...argv], {
    cwd: options.cwd ?? workspace,
    env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ...options.env },
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const lines = (text: string): Array<Record<string, any>> =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);

// Claude Code's stream-json shapes (the Agent SDK's SDKMessage), as far as the CLI writes them.
const usage = z.object({ input_tokens: z.number(), output_tokens: z.number(), cache_read_input_tokens: z.number(), cache_creation_input_tokens: z.number() });
const base = { uuid: z.string().uuid(), session_id: z.string().min(1) };
const schemas = {
  init: z.object({
    type: z.literal('system'),
    subtype: z.literal('init'),
    ...base,
    cwd: z.string(),
    tools: z.array(z.string()),
    mcp_servers: z.array(z.object({ name: z.string(), status: z.string() })),
    model: z.string(),
    permissionMode: z.string(),
    slash_commands: z.array(z.string()),
    apiKeySource: z.string(),
    claude_code_version: z.string(),
    output_style: z.string(),
  }),
  assistant: z.object({
    type: z.literal('assistant'),
    ...base,
    parent_tool_use_id: z.null(),
    message: z.object({
      id: z.string(),
      type: z.literal('message'),
      role: z.literal('assistant'),
      model: z.string(),
      content: z.array(z.discriminatedUnion('type', [z.object({ type: z.literal('text'), text: z.string() }), z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) })])),
      stop_reason: z.string().nullable(),
      usage,
    }),
  }),
  user: z.object({
    type: z.literal('user'),
    ...base,
    parent_tool_use_id: z.null(),
    message: z.object({ role: z.literal('user'), content: z.array(z.object({ type: z.literal('tool_result'), tool_use_id: z.string(), content: z.unknown(), is_error: z.boolean() })) }),
  }),
  stream_event: z.object({ type: z.literal('stream_event'), ...base, parent_tool_use_id: z.null(), event: z.object({ type: z.string() }).loose() }),
  result: z.object({
    type: z.literal('result'),
    subtype: z.enum(['success', 'error_max_turns', 'error_during_execution', 'error_max_budget_usd', 'error_max_structured_output_retries']),
    ...base,
    is_error: z.boolean(),
    duration_ms: z.number(),
    duration_api_ms: z.number(),
    num_turns: z.number(),
    result: z.string().optional(),
    structured_output: z.unknown().optional(),
    stop_reason: z.string().nullable(),
    total_cost_usd: z.number(),
    usage,
    modelUsage: z.record(z.string(), z.object({ inputTokens: z.number(), outputTokens: z.number(), costUSD: z.number() }).loose()),
    permission_denials: z.array(z.object({ tool_name: z.string(), tool_use_id: z.string(), tool_input: z.unknown() })),
    errors: z.array(z.string()).optional(),
  }),
};

function check(message: Record<string, any>): void {
  const schema = message.type === 'system' && message.subtype === 'init' ? schemas.init : schemas[message.type as 'assistant' | 'user' | 'stream_event' | 'result'];
  expect(schema, `unexpected message type ${message.type}`).toBeDefined();
  schema.parse(message);
}

/** Ids, times and paths replaced so two runs print the same text. */
function normalise(text: string): string {
  return text
    .replaceAll(workspace, '<workspace>')
    .replace(/"(uuid|session_id)":"[^"]+"/g, '"$1":"<$1>"')
    .replace(/"msg_[0-9a-f]+"/g, '"<message-id>"')
    .replace(/"(duration_ms|duration_api_ms)":\d+/g, '"$1":0')
    .replace(/"(claude_code_version|tessera_version)":"[^"]+"/g, '"$1":"<version>"');
}

describe('print mode output formats (demo model, multi-tool run)', () => {
  it('text: the final answer on stdout, nothing else', async () => {
    const { code, stdout, stderr } = await runMain(['-p', 'Summarise the notes', '--provider', 'demo', ...TASK_TOOLS]);
    expect(code).toBe(0);
    expect(stdout).toBe('Done: SUMMARY.md now lists every note I read, with its word count.\n');
    expect(stderr).toBe('');
    expect(readFileSync(join(workspace, 'SUMMARY.md'), 'utf8')).toBe('# Summary\n\n- Ideas (2 words)\n- Standup (3 words)\n');
  });

  it('stream-json: init, assistant and user messages, then one result; schema-checked and golden', async () => {
    const { code, stdout } = await runMain(['-p', 'Summarise the notes', '--provider', 'demo', '--output-format', 'stream-json', '--verbose', ...TASK_TOOLS]);
    expect(code).toBe(0);
    const messages = lines(stdout);
    messages.forEach(check);
    expect(messages.map((message) => message.type)).toEqual(['system', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'result']);
    const sessionIds = new Set(messages.map((message) => message.session_id));
    expect(sessionIds.size).toBe(1);
    expect(messages.at(-1)).toMatchObject({ subtype: 'success', is_error: false, num_turns: 5, permission_denials: [] });
    await expect(normalise(stdout)).toMatchFileSnapshot('./__golden__/stream-json.jsonl');
  });

  it('stream-json with --include-partial-messages: stream_event lines rebuild each reply', async () => {
    const { code, stdout } = await runMain(['-p', 'Summarise the notes', '--provider', 'demo', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', ...TASK_TOOLS]);
    expect(code).toBe(0);
    const messages = lines(stdout);
    messages.forEach(check);
    const events = messages.filter((message) => message.type === 'stream_event').map((message) => message.event.type);
    expect(events.filter((type) => type === 'message_start')).toHaveLength(5);
    expect(events.filter((type) => type === 'message_stop')).toHaveLength(5);
    // Each stream's events come before the assistant message they build.
    const firstAssistant = messages.findIndex((message) => message.type === 'assistant');
    const firstStream = messages.slice(0, firstAssistant).map((message) => message.event?.type).filter(Boolean).join(' ');
    // The text block (one delta per streamed word), then the tool call's block, then the end.
    expect(firstStream).toMatch(/^message_start content_block_start( content_block_delta)+ content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop$/);
    const text = messages
      .slice(0, firstAssistant)
      .filter((message) => message.event?.delta?.type === 'text_delta')
      .map((message) => message.event.delta.text)
      .join('');
    expect(text).toBe(messages[firstAssistant]!.message.content[0].text);
  });

  it('json: one result object; with --verbose, the array of every message', async () => {
    const plain = await runMain(['-p', 'Summarise the notes', '--provider', 'demo', '--output-format', 'json', ...TASK_TOOLS]);
    expect(plain.code).toBe(0);
    const result = JSON.parse(plain.stdout);
    check(result);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'Done: SUMMARY.md now lists every note I read, with its word count.' });
    await expect(normalise(plain.stdout)).toMatchFileSnapshot('./__golden__/json.json');

    workspace = makeWorkspace();
    const verbose = await runMain(['-p', 'Summarise the notes', '--provider', 'demo', '--output-format', 'json', '--verbose', ...TASK_TOOLS]);
    const all = JSON.parse(verbose.stdout) as Array<Record<string, any>>;
    all.forEach(check);
    expect(all[0]).toMatchObject({ type: 'system', subtype: 'init' });
    expect(all.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
  });

  it('a permission ask is refused with a message naming the rule, and reported in permission_denials', async () => {
    const { code, stdout } = await runMain(['-p', 'Summarise the notes', '--provider', 'demo', '--output-format', 'json']);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.permission_denials).toEqual([{ tool_name: 'Bash', tool_use_id: expect.any(String), tool_input: expect.objectContaining({ command: 'pwd' }) }]);
    expect(result.result).toContain('--allowedTools "Bash(pwd)"');
  });
});

describe('usage errors and exit codes', () => {
  it('--help lists every flag and subcommand (golden: a flag added without help, or help for a removed one, shows here)', async () => {
    const { code, stdout } = await runMain(['--help']);
    expect(code).toBe(0);
    await expect(stdout).toMatchFileSnapshot('./__golden__/help.txt');
  });

  it('without -p, a stdout that is not a terminal falls back to print mode and says so', async () => {
    const { code, stdout, stderr } = await runMain(['--provider', 'demo', 'summarise the notes'], { TESSERA_DEMO_DELAY_MS: '0' });
    expect(stderr).toContain('stdout is not a terminal, so tessera runs in print mode');
    expect(code).toBe(0);
    expect(stdout.trim()).not.toBe('');
  });

  it('an unknown flag exits 1 with a suggestion', async () => {
    const { code, stderr } = await runMain(['-p', 'hi', '--outputformat', 'json']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/unknown option '--outputformat' \(Did you mean --output-format\?\)/);
  });

  it('stream-json output without --verbose is refused as Claude Code refuses it', async () => {
    const { code, stderr } = await runMain(['-p', 'hi', '--output-format', 'stream-json', '--provider', 'demo']);
    expect(code).toBe(1);
    expect(stderr).toContain('--output-format=stream-json requires --verbose');
  });

  it('no provider: says exactly what to set', async () => {
    const { code, stderr } = await runMain(['-p', 'hi']);
    expect(code).toBe(1);
    expect(stderr).toContain('ANTHROPIC_API_KEY');
    expect(stderr).toContain('tessera provider add');
  });

  it('a broken --settings file: a located error, exit 1, nothing written', async () => {
    const file = join(workspace, 'broken.json');
    writeFileSync(file, '{\n  "model": "x",\n  oops\n}\n');
    const { code, stderr } = runBin(['-p', 'hi', '--provider', 'demo', '--settings', file]);
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`${file.replaceAll('/', '\\/')}:3:\\d+`));
    expect(existsSync(join(home, '.tessera'))).toBe(false);
  });

  it('--max-turns: error_max_turns result and exit 1', () => {
    const { code, stdout } = runBin(['-p', 'Summarise', '--provider', 'demo', '--max-turns', '2', '--output-format', 'json', ...TASK_TOOLS]);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ subtype: 'error_max_turns', is_error: true, num_turns: 2, errors: ['Reached maximum number of turns (2)'] });
  });

  it('text output: a run that fails inside (max turns) prints its result on stdout, exit 1; a usage error stays on stderr', async () => {
    const failed = await runMain(['-p', 'Summarise', '--provider', 'demo', '--max-turns', '2', ...TASK_TOOLS]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('Reached maximum number of turns (2)\n');
    expect(failed.stderr).toBe('');
    const usage = await runMain(['-p', 'Summarise', '--provider', 'demo', '--max-turns', 'abc']);
    expect(usage.code).toBe(1);
    expect(usage.stdout).toBe('');
    expect(usage.stderr).toContain('--max-turns');
  });
});

describe('against the loopback Anthropic API', () => {
  let server: FakeAnthropicServer;
  beforeEach(async () => {
    server = new FakeAnthropicServer();
    await server.listen();
  });
  afterEach(() => server.close());

  /** `env` adds to (or, with `undefined`, removes from) the run's environment. */
  async function runAgainst(argv: string[], input = '', env: Record<string, string | undefined> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const run = spawn(process.execPath, [BIN, ...argv], {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL, ...env },
    });
    let stdout = '';
    let stderr = '';
    run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    run.stdin.end(input);
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
    return { code, stdout, stderr };
  }

  it('a provider error ends in an error_during_execution result naming it, exit 1', async () => {
    server.fail(400, { message: 'max_tokens is too large' });
    const { code, stdout } = await runAgainst(['-p', 'hi', '--output-format', 'json']);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ subtype: 'error_during_execution', is_error: true, errors: [expect.stringContaining('max_tokens is too large')] });
  });

  it('text output: a provider error is the result on stdout (exit 1), as Claude Code prints failures inside the run', async () => {
    server.fail(401, { message: 'invalid x-api-key' });
    const { code, stdout, stderr } = await runAgainst(['-p', 'hi']);
    expect(code).toBe(1);
    expect(stdout).toContain('invalid x-api-key');
    expect(stderr).not.toContain('invalid x-api-key');
  });

  it('--max-budget-usd: the reply that reaches the budget ends the run, its tool calls not run: error_max_budget_usd, exit 1', async () => {
    // Sonnet at $3 per million input tokens: the first reply alone costs $3.
    server.reply({ usage: { input_tokens: 1_000_000 }, toolCalls: [{ name: 'Write', input: { file_path: join(workspace, 'spent.txt'), content: 'x' } }] });
    const over = await runAgainst(['-p', 'write it', '--output-format', 'json', '--model', 'sonnet', '--allowedTools', 'Write', '--max-budget-usd', '0.5']);
    expect(over.code).toBe(1);
    const result = JSON.parse(over.stdout);
    check(result);
    expect(result).toMatchObject({ subtype: 'error_max_budget_usd', is_error: true, terminal_reason: 'budget_exhausted', num_turns: 1, errors: [expect.stringContaining('Reached maximum budget ($0.5)')] });
    expect(result.total_cost_usd).toBeGreaterThanOrEqual(0.5);
    expect(server.requests).toHaveLength(1);
    expect(existsSync(join(workspace, 'spent.txt'))).toBe(false);

    // Under the budget nothing changes.
    server.reply({ text: ['cheap'] });
    const under = await runAgainst(['-p', 'hi', '--output-format', 'json', '--model', 'sonnet', '--max-budget-usd', '0.5']);
    expect(under.code).toBe(0);
    expect(JSON.parse(under.stdout)).toMatchObject({ subtype: 'success', result: 'cheap' });

    // stream-json (the Agent SDK's maxBudgetUsd): the budget spans the turns; once spent, the next turn makes no model call.
    server.reply({ text: ['expensive'], usage: { input_tokens: 1_000_000 } });
    const before = server.requests.length;
    const user = (text: string) => `${JSON.stringify({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' })}\n`;
    const sdk = await runAgainst(['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--model', 'sonnet', '--max-budget-usd', '0.5'], user('one') + user('two'));
    expect(sdk.code).toBe(0);
    const results = lines(sdk.stdout).filter((message) => message.type === 'result');
    expect(results.map((message) => message.subtype)).toEqual(['success', 'error_max_budget_usd']);
    expect(results[1]).toMatchObject({ is_error: true, num_turns: 0, terminal_reason: 'budget_exhausted' });
    expect(server.requests.length - before).toBe(1);

    const bad = await runMain(['-p', 'hi', '--provider', 'demo', '--max-budget-usd', 'lots']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("option '--max-budget-usd <amount>' expects an amount in US dollars");
  }, 60_000);

  it('--provider <profile> uses a user-settings profile, its $ENV: key resolved; an unknown profile is refused', async () => {
    mkdirSync(join(home, '.tessera'), { recursive: true });
    writeFileSync(join(home, '.tessera', 'settings.json'), JSON.stringify({ providers: { work: { type: 'anthropic', apiKey: '$ENV:WORK_KEY', baseURL: server.baseURL, model: 'claude-haiku-4-5' } } }));
    server.reply({ text: ['from work'] });
    const child = spawn(process.execPath, [BIN, '-p', 'hi', '--provider', 'work', '--output-format', 'json'], {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', WORK_KEY: 'sk-work' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdin.end();
    expect(await new Promise<number | null>((resolve) => child.on('close', resolve))).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ subtype: 'success', result: 'from work' });
    expect(JSON.stringify(server.requests[0]!.headers)).toContain('sk-work');
    expect(server.requests[0]!.body).toMatchObject({ model: 'claude-haiku-4-5' });
    const unknown = await runMain(['-p', 'hi', '--provider', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No provider profile "nope" in your user settings (known: work)');
  });

  it('ANTHROPIC_AUTH_TOKEN alone is sent as a bearer token (an LLM gateway), as Claude Code sends it', async () => {
    server.reply({ text: ['through the gateway'] });
    const { code, stdout } = await runAgainst(['-p', 'hi', '--output-format', 'json'], '', { ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: 'gw-static-key' });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ subtype: 'success', result: 'through the gateway' });
    expect(server.requests[0]!.headers).toMatchObject({ authorization: 'Bearer gw-static-key' });
    expect(server.requests[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('reaches an https: API through HTTPS_PROXY (a CONNECT tunnel, TLS to the API); NO_PROXY hosts go direct', async () => {
    const tls = await new TlsTerminator(Number(new URL(server.baseURL).port)).listen();
    const proxy = await new TestProxy({ routes: { 'api.example.test:443': tls.port } }).listen();
    try {
      server.reply({ text: ['through the proxy'] }, { text: ['direct'] });
      const run = (env: Record<string, string>) => runAgainst(['-p', 'hi', '--output-format', 'json'], '', { NODE_EXTRA_CA_CERTS: TEST_TLS.ca, ...env });
      const proxied = await run({ HTTPS_PROXY: proxy.url, ANTHROPIC_BASE_URL: 'https://api.example.test' });
      expect(proxied.code, proxied.stderr).toBe(0);
      expect(JSON.parse(proxied.stdout)).toMatchObject({ subtype: 'success', result: 'through the proxy' });
      expect(proxy.requests).toEqual([{ method: 'CONNECT', target: 'api.example.test:443', proxyAuthorization: undefined }]);
      const direct = await run({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1', ANTHROPIC_BASE_URL: server.baseURL });
      expect(JSON.parse(direct.stdout)).toMatchObject({ subtype: 'success', result: 'direct' });
      expect(proxy.requests).toHaveLength(1);
    } finally {
      await proxy.close();
      await tls.close();
    }
  });

  it("a repository's settings cannot choose the provider (and so where keys go) or switch approvals off", async () => {
    const elsewhere = new FakeAnthropicServer();
    await elsewhere.listen();
    try {
      mkdirSync(join(workspace, '.tessera'), { recursive: true });
      writeFileSync(
        join(workspace, '.tessera', 'settings.json'),
        JSON.stringify({ providers: { x: { type: 'anthropic', apiKey: '$ENV:SECRET_TOKEN', baseURL: elsewhere.baseURL } }, currentProvider: 'x', permissions: { defaultMode: 'bypassPermissions' } }),
      );
      server.reply({ text: ['Writing.'], toolCalls: [{ id: 'toolu_1', name: 'Write', input: { file_path: join(workspace, 'x.txt'), content: 'x' } }] }, { text: ['ok'] });
      const { code, stdout, stderr } = await runAgainst(['-p', 'hi', '--output-format', 'json']);
      expect(code).toBe(0);
      expect(elsewhere.requests).toHaveLength(0);
      expect(server.requests).toHaveLength(2);
      expect(stderr).toContain('providers, currentProvider ignored');
      expect(stderr).toContain('bypassPermissions is taken only from your user settings');
      // Default mode, print mode: the Write needed approval and was refused.
      expect(existsSync(join(workspace, 'x.txt'))).toBe(false);
      expect(JSON.parse(stdout).permission_denials).toEqual([expect.objectContaining({ tool_name: 'Write' })]);
    } finally {
      await elsewhere.close();
    }
  });

  it('-p "prompt" with a stdin pipe that never closes goes on without it after the wait', async () => {
    server.reply({ text: ['ok'] });
    const child = spawn(process.execPath, [BIN, '-p', 'hi', '--output-format', 'json'], {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL, TESSERA_STDIN_WAIT_MS: '300' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // stdin is left open on purpose.
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stderr).toContain('no stdin data received');
    expect(JSON.parse(stdout)).toMatchObject({ subtype: 'success', result: 'ok' });
  });

  it('a retried overload is reported as system/api_retry, then the turn succeeds', async () => {
    server.fail(529, { headers: { 'retry-after-ms': '5' } }).reply({ text: ['Hello ', 'there.'], usage: { input_tokens: 12, output_tokens: 3 } });
    const { code, stdout } = await runAgainst(['-p', 'hi', '--output-format', 'stream-json', '--verbose', '--model', 'sonnet']);
    expect(code).toBe(0);
    const messages = lines(stdout);
    expect(messages.find((message) => message.subtype === 'api_retry')).toMatchObject({ type: 'system', attempt: 1, max_retries: 2, error_status: 529, error: 'overloaded', retry_delay_ms: 5 });
    const result = messages.at(-1)!;
    expect(result).toMatchObject({ subtype: 'success', result: 'Hello there.', usage: { input_tokens: 12, output_tokens: 3 } });
    // sonnet → claude-sonnet-4-6 at $3 / $15 per million tokens.
    expect(result.total_cost_usd).toBeCloseTo((12 * 3 + 3 * 15) / 1_000_000, 12);
    expect(server.requests.at(-1)!.body).toMatchObject({ model: 'claude-sonnet-4-6' });
  });

  it('--fallback-model: an overloaded model hands the same request to the fallback', async () => {
    for (let index = 0; index < 3; index += 1) server.fail(529, { headers: { 'retry-after-ms': '1' } });
    server.reply({ text: ['From the fallback.'] });
    const { code, stdout, stderr } = await runAgainst(['-p', 'hi', '--output-format', 'json', '--model', 'opus', '--fallback-model', 'haiku']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ subtype: 'success', result: 'From the fallback.' });
    expect(server.requests.map((request) => (request.body as { model: string }).model)).toEqual(['claude-opus-4-6', 'claude-opus-4-6', 'claude-opus-4-6', 'claude-haiku-4-5']);
    expect(stderr).toContain('claude-opus-4-6 is overloaded; switching to claude-haiku-4-5');
  });

  it('piped stdin joins the prompt; --system-prompt and --append-system-prompt reach the request', async () => {
    server.reply({ text: ['ok'] });
    const { code } = await runAgainst(['-p', 'Explain this log:', '--system-prompt', 'You are terse.', '--append-system-prompt', 'Answer in one line.', '--tools', 'Read', 'Grep'], 'ERROR: disk full\n');
    expect(code).toBe(0);
    const body = server.requests[0]!.body as { system: unknown; messages: Array<{ content: unknown }>; tools: Array<{ name: string }> };
    const text = (value: unknown): string => (typeof value === 'string' ? value : (value as Array<{ text?: string }>).map((block) => block.text ?? '').join(''));
    expect(text(body.system)).toContain('You are terse.\n\nAnswer in one line.');
    expect(text(body.messages[0]!.content)).toContain('Explain this log:\n\nERROR: disk full');
    expect(body.tools.map((tool) => tool.name).sort()).toEqual(['Grep', 'Read']);
  });

  it('--disallowedTools with a bare name removes the tool; --permission-mode plan refuses edits', async () => {
    server.reply({ text: ['Writing.'], toolCalls: [{ id: 'toolu_1', name: 'Write', input: { file_path: join(workspace, 'x.txt'), content: 'x' } }] }, { text: ['Could not.'] });
    const { code, stdout } = await runAgainst(['-p', 'write x', '--output-format', 'json', '--disallowedTools', 'Bash', '--permission-mode', 'plan']);
    expect(code).toBe(0);
    expect((server.requests[0]!.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).not.toContain('Bash');
    expect(existsSync(join(workspace, 'x.txt'))).toBe(false);
    expect(JSON.parse(stdout).permission_denials).toEqual([expect.objectContaining({ tool_name: 'Write' })]);
    expect(JSON.stringify(server.requests[1]!.body)).toContain('not available in plan mode');
  });

  const bodyText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
  const userLine = (text: string) => `${JSON.stringify({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' })}\n`;

  it('--agents: inline subagents are listed in system/init and run through the agent tool with their prompt, tools and model; an inline agent beats a file agent of the same name', async () => {
    mkdirSync(join(workspace, '.claude', 'agents'), { recursive: true });
    writeFileSync(join(workspace, '.claude', 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: The file reviewer\n---\nFILE REVIEWER PROMPT\n');
    const agents = JSON.stringify({
      reviewer: { description: 'The inline reviewer', prompt: 'INLINE REVIEWER PROMPT', tools: ['Read', 'Grep'], model: 'claude-haiku-4-5' },
      'release-notes': { description: 'Writes release notes', prompt: 'You write release notes.' },
    });
    server.reply(
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: 'reviewer Check the notes.' } }] },
      { text: ['The notes are fine.'] }, // the reviewer's own model call
      { text: ['Reviewed.'] },
    );
    const run = await runAgainst(['-p', 'review', '--output-format', 'stream-json', '--verbose', '--allowedTools', 'tessera_command_agent', '--agents', agents]);
    expect(run.code, run.stderr).toBe(0);
    const out = lines(run.stdout);
    expect(out[0]!.agents).toEqual(expect.arrayContaining(['general-purpose', 'reviewer', 'release-notes']));
    const [main, reviewer] = server.bodies as Array<{ system: unknown; tools: Array<{ name: string }>; model: string }>;
    expect(main!.tools.map((tool) => tool.name)).toContain('tessera_command_agent');
    expect(bodyText(reviewer!.system)).toContain('INLINE REVIEWER PROMPT');
    expect(bodyText(reviewer!.system)).not.toContain('FILE REVIEWER PROMPT');
    // Its `tools` (the provider's hosted web search aside): only those.
    expect(reviewer!.tools.map((tool) => tool.name).filter((name) => name !== 'web_search').sort()).toEqual(['Grep', 'Read']);
    expect(reviewer!.model).toBe('claude-haiku-4-5');
    expect(out.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Reviewed.' });

    // The Agent SDK's mode (stream-json input) takes them too.
    server.reply({ text: ['hi'] });
    const sdk = await runAgainst(['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--agents', agents], userLine('hello'));
    expect(sdk.code, sdk.stderr).toBe(0);
    expect(sdk.stderr).not.toContain('ignoring unknown option');
    expect(lines(sdk.stdout)[0]).toMatchObject({ type: 'system', subtype: 'init', agents: expect.arrayContaining(['reviewer', 'release-notes']) });
  }, 60_000);

  it('--agents: invalid JSON or a bad field exits 1 before the run, naming --agents and the field', async () => {
    const cases: Array<[string, string[]]> = [
      ['{"reviewer":', ['--agents is not valid JSON']],
      ['["reviewer"]', ['--agents must be a JSON object']],
      ['{"reviewer":{"prompt":"p"}}', ['--agents: agent "reviewer": "description" must be a non-empty string']],
      ['{"reviewer":{"description":"d","prompt":""}}', ['--agents: agent "reviewer": "prompt" must be a non-empty string']],
      ['{"reviewer":{"description":"d","prompt":"p","tools":"Read"}}', ['--agents: agent "reviewer": "tools" must be an array of tool names']],
      ['{"reviewer":{"description":"d","prompt":"p","model":3}}', ['--agents: agent "reviewer": "model" must be']],
      ['{"a:b":{"description":"d","prompt":"p"}}', ['--agents: agent name "a:b" is refused']],
    ];
    for (const [value, expected] of cases) {
      for (const mode of [['-p', 'hi'], ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json']]) {
        const run = runBin([...mode, '--provider', 'demo', '--agents', value]);
        expect(run.code, `${value}: ${run.stderr}`).toBe(1);
        for (const text of expected) expect(run.stderr).toContain(text);
        expect(run.stdout).toBe('');
      }
    }
    // A key Tessera does not apply is a warning, not a failure.
    const extra = runBin(['-p', 'hi', '--provider', 'demo', '--output-format', 'json', '--agents', '{"x":{"description":"d","prompt":"p","color":"red"}}']);
    expect(extra.code).toBe(0);
    expect(extra.stderr).toContain('--agents: agent "x": "color" is not applied');
  }, 60_000);

  const SCHEMA = { type: 'object', properties: { answer: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['answer'], additionalProperties: false };

  it('--json-schema: the model answers through the StructuredOutput tool; the result carries structured_output and the run ends at the accepted call', async () => {
    server.reply({ text: ['Counting.'], toolCalls: [{ name: 'StructuredOutput', input: { answer: 42, tags: ['x'] } }] });
    const run = await runAgainst(['-p', 'how many?', '--output-format', 'json', '--json-schema', JSON.stringify(SCHEMA)]);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    check(result);
    expect(result).toMatchObject({ subtype: 'success', is_error: false, structured_output: { answer: 42, tags: ['x'] }, num_turns: 1, terminal_reason: 'completed' });
    expect(server.requests).toHaveLength(1);
    const body = server.bodies[0] as { system: unknown; tools: Array<{ name: string; input_schema: unknown }> };
    expect(body.tools.find((tool) => tool.name === 'StructuredOutput')?.input_schema).toMatchObject(SCHEMA);
    expect(bodyText(body.system)).toContain('call the StructuredOutput tool exactly once');

    // Text output prints the structured answer as JSON; `--tools` keeps the tool.
    server.reply({ toolCalls: [{ name: 'StructuredOutput', input: { answer: 7 } }] });
    const text = await runAgainst(['-p', 'how many?', '--tools', 'Read', '--json-schema', JSON.stringify(SCHEMA)]);
    expect(text.code, text.stderr).toBe(0);
    expect(JSON.parse(text.stdout)).toEqual({ answer: 7 });
    expect((server.bodies[1] as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name).sort()).toEqual(['Read', 'StructuredOutput']);

    // The Agent SDK's outputFormat (stream-json input): each turn's result carries its own structured_output.
    server.reply({ toolCalls: [{ name: 'StructuredOutput', input: { answer: 1 } }] }, { toolCalls: [{ name: 'StructuredOutput', input: { answer: 2 } }] });
    const sdk = await runAgainst(['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--json-schema', JSON.stringify(SCHEMA)], userLine('one') + userLine('two'));
    expect(sdk.code, sdk.stderr).toBe(0);
    expect(sdk.stderr).not.toContain('ignoring unknown option');
    const results = lines(sdk.stdout).filter((message) => message.type === 'result');
    expect(results.map((message) => [message.subtype, message.structured_output])).toEqual([['success', { answer: 1 }], ['success', { answer: 2 }]]);
    expect(JSON.stringify(server.bodies[3])).toContain('Structured output accepted.');
  }, 60_000);

  it('--json-schema: non-conforming input and a reply without the call are retried; after 3 failed attempts the result is error_max_structured_output_retries, exit 1', async () => {
    // One bad call (told why), a reply without the call (reminded), then a good call.
    server.reply(
      { toolCalls: [{ name: 'StructuredOutput', input: { answer: 'many' } }] },
      { text: ['It is 3.'] },
      { toolCalls: [{ name: 'StructuredOutput', input: { answer: 3 } }] },
    );
    const retried = await runAgainst(['-p', 'count', '--output-format', 'json', '--json-schema', JSON.stringify(SCHEMA)]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout)).toMatchObject({ subtype: 'success', structured_output: { answer: 3 } });
    expect(server.requests).toHaveLength(3);
    expect(JSON.stringify(server.bodies[1])).toContain('does not conform to the required JSON schema');
    expect(JSON.stringify(server.bodies[2])).toContain('without calling the StructuredOutput tool');

    server.reply(
      { toolCalls: [{ name: 'StructuredOutput', input: { answer: 'a' } }] },
      { toolCalls: [{ name: 'StructuredOutput', input: { answer: 1, extra: true } }] },
      { toolCalls: [{ name: 'StructuredOutput', input: {} }] },
      { text: ['never asked'] },
    );
    const failed = await runAgainst(['-p', 'count', '--output-format', 'json', '--json-schema', JSON.stringify(SCHEMA)]);
    expect(failed.code).toBe(1);
    const result = JSON.parse(failed.stdout);
    check(result);
    expect(result).toMatchObject({ subtype: 'error_max_structured_output_retries', is_error: true, num_turns: 3, errors: [expect.stringContaining('--json-schema')] });
    expect(result.structured_output).toBeUndefined();
    expect(server.requests).toHaveLength(6);
  }, 60_000);

  it('--json-schema: an invalid schema exits 1 before the run, naming --json-schema; interactive mode refuses it', async () => {
    for (const [schema, expected] of [
      ['{"type":', '--json-schema is not valid JSON'],
      ['{"type":"object","properties":{"x":{"type":"bogus"}}}', '--json-schema is not a valid JSON Schema'],
      ['{"type":"string"}', '--json-schema must describe an object'],
      ['[1]', '--json-schema must be a JSON Schema object'],
    ] as const) {
      const run = runBin(['-p', 'hi', '--provider', 'demo', '--json-schema', schema]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(expected);
      expect(run.stdout).toBe('');
    }
    expect(server.requests).toHaveLength(0);
    const interactive = await runMain(['--provider', 'demo', '--json-schema', '{"type":"object"}'], {}, true);
    expect(interactive.code).toBe(1);
    expect(interactive.stderr).toContain('--json-schema works only in print mode');
  }, 60_000);
});

describe('start-up discipline and doctor', () => {
  it('the print path loads only what the run needs: one provider SDK, no subcommand', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'tessera-cli-cache-'));
    const server = new FakeAnthropicServer();
    await server.listen();
    try {
      server.reply({ text: ['ok'] });
      const run = spawn(process.execPath, [BIN, '-p', 'hi'], {
        cwd: workspace,
        env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL, TESSERA_COMPILE_CACHE: cache },
      });
      run.stdin.end();
      expect(await new Promise<number | null>((resolve) => run.on('close', resolve))).toBe(0);
    } finally {
      await server.close();
    }
    // The bin writes one code cache per bundle file it compiled: that is the list of what loaded.
    const bundleDir = join(dirname(BIN), '..', 'dist-bundle');
    const loaded = readdirSync(cache, { recursive: true })
      .map((name) => String(name).split('/').at(-1)!)
      .filter((name) => name.endsWith('.bin'))
      .map((name) => name.replace(/-[0-9.]+-node\.\d+-\d+-\d+\.bin$/, ''));
    expect(loaded).toContain('tessera.cjs');
    const sources = loaded.map((name) => readFileSync(join(bundleDir, name), 'utf8'));
    expect(sources.some((source) => source.includes('https://api.anthropic.com'))).toBe(true);
    expect(sources.some((source) => source.includes('https://api.openai.com'))).toBe(false);
    expect(loaded.filter((name) => /^(doctor|sessions|history|config|provider|plugin|worker|serve|serve-replicas|run-interactive|compose-session|first-run)-[\w-]{8}\.cjs$/.test(name))).toEqual([]);
    // No terminal UI (pi-tui's Markdown renderer is marked) in a print run.
    expect(sources.some((source) => source.includes('marked') && source.includes('CURSOR_MARKER'))).toBe(false);
    // No MCP SDK without MCP servers (the client is composed; its connections load on demand).
    expect(loaded.filter((name) => name.startsWith('mcp-connection-'))).toEqual([]);
    expect(sources.some((source) => source.includes('StdioClientTransport'))).toBe(false);
    expect(sources.some((source) => source.includes('new McpClientPool('))).toBe(true);
    // Cached code runs as the program: private folder and files only.
    const folders = readdirSync(cache);
    expect(folders).toHaveLength(1);
    expect(statSync(join(cache, folders[0]!)).mode & 0o777).toBe(0o700);
    for (const file of readdirSync(join(cache, folders[0]!))) expect(statSync(join(cache, folders[0]!, file)).mode & 0o777).toBe(0o600);
  });

  it('doctor reports settings layers, the provider and its reachability, context files and plugins', async () => {
    writeFileSync(join(workspace, 'AGENTS.md'), '# Agents\nBe brief.\n');
    mkdirSync(join(workspace, '.claude'));
    writeFileSync(join(workspace, '.claude', 'settings.json'), '{ "model": 3 }');
    const server = new FakeAnthropicServer();
    await server.listen();
    try {
      const { code, stdout } = await runMain(['doctor', '--json'], { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL });
      const report = JSON.parse(stdout);
      expect(report.provider).toMatchObject({ type: 'anthropic', source: 'ANTHROPIC_API_KEY', reachable: true });
      expect(report.contextFiles).toEqual([expect.objectContaining({ path: join(workspace, 'AGENTS.md') })]);
      expect(report.settings.map((layer: { file: string }) => layer.file)).toContain(join(workspace, '.claude', 'settings.json'));
      expect(report.problems.join('\n')).toContain(`${join(workspace, '.claude', 'settings.json')}`);
      expect(report.plugins.map((plugin: { name: string }) => plugin.name)).toEqual(expect.arrayContaining(['permissions', 'claude-hooks', 'provider-from-profile']));
      // A wrong type for a known key is a located settings error: doctor says so with exit 1.
      expect(code).toBe(1);
    } finally {
      await server.close();
    }
    const unreachable = await runMain(['doctor'], { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
    expect(unreachable.stdout).toContain('unreachable');
    expect(unreachable.code).toBe(1);
    const help = await runMain(['doctor', '--help']);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: tessera doctor') });
  });
});

describe('sessions across processes', () => {
  it('-c continues, -r <id> resumes, --fork-session leaves the original file byte-identical', () => {
    const first = runBin(['-p', 'Summarise', '--provider', 'demo', '--output-format', 'json', ...TASK_TOOLS]);
    expect(first.code).toBe(0);
    const id = JSON.parse(first.stdout).session_id as string;

    const continued = runBin(['-c', '-p', 'again', '--provider', 'demo', '--output-format', 'json', ...TASK_TOOLS]);
    expect(JSON.parse(continued.stdout).session_id).toBe(id);

    const resumed = runBin(['-r', id, '-p', 'once more', '--provider', 'demo', '--output-format', 'json', ...TASK_TOOLS]);
    expect(JSON.parse(resumed.stdout).session_id).toBe(id);

    const sessionsDir = join(home, '.tessera', 'agent', 'sessions');
    const files = readdirSync(sessionsDir, { recursive: true }).map(String).filter((name) => name.endsWith(`_${id}.jsonl`));
    expect(files).toHaveLength(1);
    const before = readFileSync(join(sessionsDir, files[0]!));
    expect(before.toString().split('\n').filter((line) => line.includes('"role":"user"')).length).toBeGreaterThanOrEqual(3);

    const forked = runBin(['-r', id, '--fork-session', '-p', 'fork it', '--provider', 'demo', '--output-format', 'json', ...TASK_TOOLS]);
    const forkId = JSON.parse(forked.stdout).session_id as string;
    expect(forkId).not.toBe(id);
    expect(readFileSync(join(sessionsDir, files[0]!)).equals(before)).toBe(true);

    const missing = runBin(['-r', 'no-such-session', '-p', 'x', '--provider', 'demo']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No conversation found with session ID or name: no-such-session');

    // As Claude Code: another folder's session is resumed from its folder, and the error says how.
    const elsewhere = join(workspace, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const refused = runBin(['-r', id, '-p', 'from here', '--provider', 'demo'], { cwd: elsewhere });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('This conversation is from a different directory');
    expect(refused.stderr).toContain(`cd ${workspace} && tessera --resume ${id}`);
    expect(readFileSync(join(sessionsDir, files[0]!)).equals(before)).toBe(true);
  });

  it('SIGINT ends the running turn with an error result, saves the session and exits 130', async () => {
    const child = spawn(process.execPath, [BIN, '-p', 'Summarise', '--provider', 'demo', '--output-format', 'stream-json', '--verbose', ...TASK_TOOLS], {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', TESSERA_DEMO_DELAY_MS: '150' },
    });
    let stdout = '';
    let interrupted = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!interrupted && stdout.includes('"type":"assistant"')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    const messages = lines(stdout);
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'error_during_execution', is_error: true });
    const id = messages[0]!.session_id as string;
    const sessionsDir = join(home, '.tessera', 'agent', 'sessions');
    expect(readdirSync(sessionsDir, { recursive: true }).map(String).some((name) => name.endsWith(`_${id}.jsonl`))).toBe(true);
  });

  it('-p -c with no conversation in the folder exits 1 naming the problem, and starts no session', () => {
    const empty = runBin(['-p', 'hi', '-c', '--provider', 'demo', '--output-format', 'json']);
    expect(empty.code).toBe(1);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toContain(`No conversation found to continue in ${workspace}`);
    expect(empty.stderr).toContain('--continue');
    expect(existsSync(join(home, '.tessera', 'agent', 'sessions'))).toBe(false);
    // Another folder's conversation is not this folder's.
    const elsewhere = join(workspace, 'elsewhere');
    mkdirSync(elsewhere);
    expect(runBin(['-p', 'hi', '--provider', 'demo'], { cwd: elsewhere }).code).toBe(0);
    expect(runBin(['-p', 'hi', '-c', '--provider', 'demo'], { cwd: workspace }).code).toBe(1);
    expect(runBin(['-p', 'hi', '-c', '--provider', 'demo'], { cwd: elsewhere }).code).toBe(0);
  });

  it('--no-session-persistence writes no session file', () => {
    const run = runBin(['-p', 'Summarise', '--provider', 'demo', '--no-session-persistence', '--output-format', 'json', ...TASK_TOOLS]);
    expect(run.code).toBe(0);
    expect(existsSync(join(home, '.tessera', 'agent', 'sessions'))).toBe(false);
  });
});

describe('stream-json input and the control protocol', () => {
  /** A scripted host: writes lines, answers the CLI's control requests with `answer`. */
  function host(argv: string[], answer: (request: Record<string, any>) => Record<string, any> | undefined, env: Record<string, string> = {}) {
    const child = spawn(process.execPath, [BIN, '--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--provider', 'demo', ...argv], {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ...env },
    });
    const driven = driveStreamJson(child, (message) => {
      if (message.type !== 'control_request') return;
      const response = answer(message.request);
      if (response) child.stdin.write(`${JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response } })}\n`);
    });
    return { ...driven, send: (message: Record<string, unknown>) => driven.send(`${JSON.stringify(message)}\n`), sendRaw: driven.send };
  }
  const user = (text: string) => ({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] }, parent_tool_use_id: null, session_id: '' });

  it('initialize with hooks, can_use_tool asks, hook_callback fires; malformed lines get an error and the session goes on', async () => {
    const asked: Array<Record<string, any>> = [];
    const hooked: Array<Record<string, any>> = [];
    const cli = host(['--permission-prompt-tool=stdio'], (request) => {
      if (request.subtype === 'can_use_tool') {
        asked.push(request);
        return { behavior: 'allow', toolUseID: request.tool_use_id };
      }
      if (request.subtype === 'hook_callback') {
        hooked.push(request);
        return {};
      }
      return undefined;
    });
    cli.send({ type: 'control_request', request_id: 'init_1', request: { subtype: 'initialize', hooks: { PreToolUse: [{ matcher: 'Write', hookCallbackIds: ['hook_0'] }] } } });
    cli.sendRaw('this is not json\n');
    cli.send(user('Summarise the notes'));
    const initialized = await cli.waitFor((message) => message.type === 'control_response' && message.response.request_id === 'init_1');
    expect(initialized.response).toMatchObject({ subtype: 'success', response: { commands: expect.any(Array), output_style: 'default' } });
    const result = await cli.waitFor((message) => message.type === 'result');
    expect(result).toMatchObject({ subtype: 'success' });
    expect(cli.seen.find((message) => message.type === 'system' && message.subtype === 'error')?.error).toMatch(/stdin line 2 is not a JSON object/);
    // Bash(pwd), Glob and Read each needed approval in default mode; Write was asked too.
    expect(asked.map((request) => request.tool_name)).toEqual(expect.arrayContaining(['Bash', 'Write']));
    expect(asked[0]).toMatchObject({ input: expect.any(Object), tool_use_id: expect.any(String), permission_suggestions: expect.any(Array) });
    expect(hooked).toEqual([expect.objectContaining({ callback_id: 'hook_0', input: expect.objectContaining({ hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: expect.any(Object) }) })]);
    expect(readFileSync(join(workspace, 'SUMMARY.md'), 'utf8')).toContain('Standup');

    // A second turn on the same process, then EOF ends it cleanly.
    cli.send({ type: 'control_request', request_id: 'mode_1', request: { subtype: 'set_permission_mode', mode: 'acceptEdits' } });
    // bypassPermissions only with --allow-dangerously-skip-permissions, as Claude Code.
    cli.send({ type: 'control_request', request_id: 'mode_2', request: { subtype: 'set_permission_mode', mode: 'bypassPermissions' } });
    cli.send({ type: 'control_request', request_id: 'bad_1', request: { subtype: 'no_such_thing' } });
    cli.send(user('again'));
    cli.end();
    expect(await cli.exit).toBe(0);
    expect(cli.seen.filter((message) => message.type === 'result')).toHaveLength(2);
    expect(cli.seen.find((message) => message.type === 'control_response' && message.response.request_id === 'mode_1')?.response).toMatchObject({ subtype: 'success', response: { mode: 'acceptEdits' } });
    expect(cli.seen.find((message) => message.type === 'control_response' && message.response.request_id === 'mode_2')?.response).toMatchObject({ subtype: 'error', error: expect.stringContaining('--allow-dangerously-skip-permissions') });
    expect(cli.seen.find((message) => message.type === 'control_response' && message.response.request_id === 'bad_1')?.response).toMatchObject({ subtype: 'error', error: expect.stringContaining('no_such_thing') });
  }, 60_000);

  it('with --allow-dangerously-skip-permissions a host may switch to bypassPermissions', async () => {
    const cli = host(['--allow-dangerously-skip-permissions'], () => undefined);
    cli.send(user('hello'));
    await cli.waitFor((message) => message.type === 'result');
    cli.send({ type: 'control_request', request_id: 'mode_1', request: { subtype: 'set_permission_mode', mode: 'bypassPermissions' } });
    cli.end();
    expect(await cli.exit).toBe(0);
    expect(cli.seen.find((message) => message.type === 'control_response' && message.response.request_id === 'mode_1')?.response).toMatchObject({ subtype: 'success', response: { mode: 'bypassPermissions' } });
  }, 60_000);

  it('a deny answer reaches the model as the tool result; a host that never answers is cancelled and refused', async () => {
    const cli = host(
      ['--permission-prompt-tool=stdio'],
      (request) => (request.subtype === 'can_use_tool' && request.tool_name === 'Bash' ? { behavior: 'deny', message: 'no shell today' } : undefined),
      { TESSERA_PERMISSION_PROMPT_TIMEOUT_MS: '500' },
    );
    cli.send(user('Summarise the notes'));
    const result = await cli.waitFor((message) => message.type === 'result');
    const toolResult = cli.seen.find((message) => message.type === 'user')!;
    // The host's message is the whole tool result, word for word (as Claude Code passes it).
    expect(toolResult.message.content[0]).toMatchObject({ content: 'no shell today', is_error: true });
    expect(result.permission_denials).toEqual([expect.objectContaining({ tool_name: 'Bash' })]);
    cli.end();
    await cli.exit;

    // Nobody answers can_use_tool: after the timeout the request is withdrawn and the call refused.
    workspace = makeWorkspace();
    const silent = host(['--permission-prompt-tool=stdio'], () => undefined, { TESSERA_PERMISSION_PROMPT_TIMEOUT_MS: '300' });
    silent.send(user('Summarise the notes'));
    const ended = await silent.waitFor((message) => message.type === 'result');
    const ask = silent.seen.find((message) => message.type === 'control_request')!;
    expect(silent.seen).toContainEqual({ type: 'control_cancel_request', request_id: ask.request_id });
    expect(ended.permission_denials).toHaveLength(1);
    expect(JSON.stringify(silent.seen.find((message) => message.type === 'user'))).toContain('did not answer the permission request');
    silent.end();
    expect(await silent.exit).toBe(0);
  }, 60_000);

  it('system/init comes first; a document-only message gets an error result naming the kinds left out; a host deny rule in updatedPermissions is not turned into an allow', async () => {
    let asks = 0;
    const cli = host(['--permission-prompt-tool=stdio'], (request) => {
      if (request.subtype !== 'can_use_tool') return undefined;
      asks += 1;
      return {
        behavior: request.tool_name === 'Bash' ? 'allow' : 'deny',
        message: 'no',
        updatedPermissions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'pwd' }], behavior: 'deny', destination: 'session' }],
      };
    });
    cli.sendRaw('[1, 2]\n');
    cli.send({ type: 'user', message: { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }] }, parent_tool_use_id: null, session_id: '' });
    cli.send(user('first'));
    const results = (count: number) => (message: Record<string, any>) => message.type === 'result' && cli.seen.filter((seen) => seen.type === 'result').length === count;
    await cli.waitFor(results(2));
    const bashAsksAfterFirst = asks;
    cli.send(user('second'));
    await cli.waitFor(results(3));
    cli.end();
    expect(await cli.exit).toBe(0);
    expect(cli.seen[0]).toMatchObject({ type: 'system', subtype: 'init' });
    const errors = cli.seen.filter((message) => message.type === 'system' && message.subtype === 'error').map((message) => message.error as string);
    expect(errors).toEqual([expect.stringMatching(/stdin line 1 is not a JSON object/)]);
    // Nothing left to send: the host still gets the message's result.
    expect(cli.seen.find((message) => message.type === 'result')).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      num_turns: 0,
      errors: [expect.stringContaining('stdin line 2: message.content has no text or image (only document blocks, which are not supported yet)')],
    });
    expect(cli.seen.filter((message) => message.type === 'result')).toHaveLength(3);
    // Bash was asked in the first turn and asked again in the second: the deny rule was not remembered as an allow.
    expect(asks).toBeGreaterThan(bashAsksAfterFirst);
    expect(cli.stderr()).toContain('is not supported here and was not applied');
  }, 60_000);

  it('interrupt stops a running turn; the process stays usable for the next message', async () => {
    mkdirSync(join(workspace, 'many'));
    const cli = host(['--allowedTools', 'Bash(pwd)', 'Glob', 'Read', 'Write'], () => undefined, { TESSERA_DEMO_DELAY_MS: '40' });
    cli.send(user('Summarise the notes'));
    await cli.waitFor((message) => message.type === 'assistant');
    cli.send({ type: 'control_request', request_id: 'int_1', request: { subtype: 'interrupt' } });
    const answered = await cli.waitFor((message) => message.type === 'control_response' && message.response.request_id === 'int_1');
    expect(answered.response.subtype).toBe('success');
    const first = await cli.waitFor((message) => message.type === 'result');
    expect(first).toMatchObject({ subtype: 'error_during_execution', is_error: true });
    cli.send(user('again'));
    await cli.waitFor((message) => message.type === 'result' && message !== first);
    cli.end();
    expect(await cli.exit).toBe(0);
  }, 60_000);

  it('a control_request without request_id or request: an error control_response when it has an id, a stderr line naming the line otherwise; the process goes on', async () => {
    const cli = host([], () => undefined);
    cli.send({ type: 'control_request', request_id: 'r_noreq' });
    cli.send({ type: 'control_request', request: { subtype: 'interrupt' } });
    cli.send(user('hello'));
    const answered = await cli.waitFor((message) => message.type === 'control_response' && message.response.request_id === 'r_noreq');
    expect(answered.response).toMatchObject({ subtype: 'error', request_id: 'r_noreq', error: expect.stringMatching(/stdin line 1: .*"request"/) });
    await cli.waitFor((message) => message.type === 'result');
    cli.end();
    expect(await cli.exit).toBe(0);
    expect(cli.stderr()).toMatch(/stdin line 2: a control_request needs a "request_id"/);
  }, 60_000);
});

describe('Claude Code compatibility (CLI audit)', () => {
  const initOf = (stdout: string) => lines(stdout).find((message) => message.type === 'system' && message.subtype === 'init')!;

  it('--setting-sources limits which settings files load, with their permissions, hooks and project MCP servers ("" loads none)', () => {
    mkdirSync(join(workspace, '.claude'));
    const marker = join(workspace, 'hook-ran');
    writeFileSync(
      join(workspace, '.claude', 'settings.json'),
      JSON.stringify({
        permissions: { deny: ['Bash'] },
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `touch ${marker}` }] }] },
        enableAllProjectMcpServers: true,
      }),
    );
    writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { proj: { command: process.execPath, args: ['-e', ''] } } }));
    const run = (sources: string) => runBin(['-p', 'hi', '--provider', 'demo', '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash(pwd)', '--setting-sources', sources]);
    const denied = (stdout: string) => JSON.stringify(lines(stdout).filter((message) => message.type === 'user')).includes('Bash is denied by the rule Bash');

    for (const sources of ['', 'user', 'local']) {
      const isolated = run(sources);
      expect(isolated.code, isolated.stderr).toBe(0);
      expect(denied(isolated.stdout)).toBe(false);
      expect(initOf(isolated.stdout).mcp_servers.map((server: { name: string }) => server.name)).not.toContain('proj');
      expect(existsSync(marker)).toBe(false);
    }
    const project = run('project');
    expect(denied(project.stdout)).toBe(true);
    expect(initOf(project.stdout).mcp_servers.map((server: { name: string }) => server.name)).toContain('proj');
    expect(existsSync(marker)).toBe(true);

    const bad = runBin(['-p', 'hi', '--provider', 'demo', '--setting-sources', 'user,everything']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--setting-sources");
    expect(bad.stdout).toBe('');
  });

  it('a bare-name deny (--disallowedTools or settings) removes the tool from system/init tools', () => {
    const run = runBin(['-p', 'hi', '--provider', 'demo', '--output-format', 'stream-json', '--verbose', '--disallowedTools', 'Bash', '--settings', '{"permissions":{"deny":["Write","Read(./secret/**)"]}}']);
    expect(run.code).toBe(0);
    const tools = initOf(run.stdout).tools as string[];
    expect(tools).not.toContain('Bash');
    expect(tools).not.toContain('Write');
    expect(tools).toEqual(expect.arrayContaining(['Read', 'Glob']));
  });

  it('--session-id must be a UUID, and one already in use is refused with exit 1, the stored session untouched', () => {
    const notUuid = runBin(['-p', 'hi', '--provider', 'demo', '--output-format', 'json', '--session-id', 'not-a-uuid']);
    expect(notUuid.code).toBe(1);
    expect(notUuid.stdout).toBe('');
    expect(notUuid.stderr).toMatch(/--session-id.*not-a-uuid.*UUID/);

    const id = '22222222-2222-4333-8444-555555555555';
    const first = runBin(['-p', 'first prompt', '--provider', 'demo', '--output-format', 'json', '--session-id', id, ...TASK_TOOLS]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).session_id).toBe(id);
    const sessionsDir = join(home, '.tessera', 'agent', 'sessions');
    const file = readdirSync(sessionsDir, { recursive: true }).map(String).find((name) => name.endsWith(`_${id}.jsonl`))!;
    const before = readFileSync(join(sessionsDir, file));
    const again = runBin(['-p', 'second prompt', '--provider', 'demo', '--output-format', 'json', '--session-id', id, ...TASK_TOOLS]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain(`Error: Session ID ${id} is already in use.`);
    expect(again.stderr).toContain(`--resume ${id}`);
    expect(readFileSync(join(sessionsDir, file)).equals(before)).toBe(true);
  });

  it('interactive mode checks --session-id as print mode does (a non-UUID or an id in use is refused, the stored session untouched) and refuses --max-budget-usd', async () => {
    let stderr = '';
    const io = { stdout: () => undefined, stderr: (text: string) => void (stderr += text), cwd: workspace, home, env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0' }, stdinIsTTY: true, stdoutIsTTY: true };
    const interactive = (argv: string[]) => runInteractive(parseArgs(['--provider', 'demo', ...argv]), io, { terminal: new RecordingTerminal(80, 24) });

    await expect(interactive(['--session-id', 'not-a-uuid'])).rejects.toThrow(/--session-id "not-a-uuid" is not a valid UUID/);
    await expect(interactive(['-c', '--session-id', '33333333-3333-4333-8444-555555555555'])).rejects.toThrow(/--fork-session/);
    // --max-budget-usd is a print-mode flag: refused here rather than not enforced.
    await expect(interactive(['--max-budget-usd', '1'])).rejects.toThrow(/--max-budget-usd works only in print mode/);

    const id = '33333333-3333-4333-8444-555555555555';
    expect(runBin(['-p', 'first prompt', '--provider', 'demo', '--session-id', id]).code).toBe(0);
    const sessionsDir = join(home, '.tessera', 'agent', 'sessions');
    const file = readdirSync(sessionsDir, { recursive: true }).map(String).find((name) => name.endsWith(`_${id}.jsonl`))!;
    const before = readFileSync(join(sessionsDir, file));
    expect(await interactive(['--session-id', id])).toBe(1);
    expect(stderr).toContain(`Session ID ${id} is already in use`);
    expect(stderr).toContain(`--resume ${id}`);
    expect(readFileSync(join(sessionsDir, file)).equals(before)).toBe(true);
  }, 30_000);

  it('--replay-user-messages: the echo carries a uuid (the host\'s own when it sent one)', () => {
    const user = (text: string, extra: Record<string, unknown> = {}) => JSON.stringify({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '', ...extra });
    const hostUuid = '44444444-4444-4444-8444-555555555555';
    const run = runBin(['--provider', 'demo', '--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--replay-user-messages'], { input: `${user('hello')}\n${user('again', { uuid: hostUuid })}\n` });
    expect(run.code, run.stderr).toBe(0);
    const echoes = lines(run.stdout).filter((message) => message.type === 'user' && message.isReplay === true);
    expect(echoes).toHaveLength(2);
    expect(echoes[0]!.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(echoes[1]!.uuid).toBe(hostUuid);
    expect(echoes.every((message) => message.session_id === echoes[0]!.session_id && message.session_id !== '')).toBe(true);
  });

  it('a reader that closes stdout early (EPIPE) ends the run quietly: no stack trace, the session saved', async () => {
    const child = spawn(process.execPath, [BIN, '-p', 'Summarise', '--provider', 'demo', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', ...TASK_TOOLS], {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', TESSERA_DEMO_DELAY_MS: '20' },
    });
    let stderr = '';
    let first = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', (chunk: Buffer) => {
      first = chunk.toString();
      child.stdout.destroy();
    });
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(1);
    const id = JSON.parse(first.split('\n')[0]!).session_id as string;
    const sessionsDir = join(home, '.tessera', 'agent', 'sessions');
    expect(readdirSync(sessionsDir, { recursive: true }).map(String).some((name) => name.endsWith(`_${id}.jsonl`))).toBe(true);
  }, 60_000);
});
