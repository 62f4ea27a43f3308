import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAcpCommand } from './subcommands/acp.js';

// `tessera acp` end to end with the SDK's own client: in-process through `runAcpCommand` over
// piped streams, and as a real process (the built subcommand, started by a small launcher
// until `main.ts` lists `acp`) over its stdio. The built-in demo model plays a real
// multi-tool task: Bash, Glob, Read, then a Write the editor is asked about.

const DIST_ACP = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'subcommands', 'acp.js');
const TASK_TOOLS = ['--allowedTools', 'Bash(pwd)', 'Glob', 'Read'];

let home: string;
let workspace: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'tessera-acp-home-'));
  workspace = mkdtempSync(join(tmpdir(), 'tessera-acp-ws-'));
  writeFileSync(join(workspace, 'standup.md'), '# Standup\nShipped the kernel.\n');
  writeFileSync(join(workspace, 'ideas.md'), '# Ideas\nA marketplace.\n');
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: home, TESSERA_SESSION_LOG: '0' });
const storedSessions = (): string[] => {
  const dir = join(home, '.tessera', 'agent', 'sessions');
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter((name) => name.endsWith('.jsonl')) : [];
};

/** The SDK client over a pair of byte streams; answers permission asks with `answer`. */
function editor(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>, answer: string) {
  const updates: acp.SessionNotification[] = [];
  const asked: acp.RequestPermissionRequest[] = [];
  const connection = acp
    .client({ name: 'test-editor' })
    .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: 'selected', optionId: answer } };
    })
    .connect(acp.ndJsonStream(output, input));
  const of = <T extends acp.SessionUpdate['sessionUpdate']>(type: T) =>
    updates.map((note) => note.update).filter((update): update is Extract<acp.SessionUpdate, { sessionUpdate: T }> => update.sessionUpdate === type);
  return { agent: connection.agent, updates, asked, of, connection };
}

async function newSession(agent: acp.ClientContext): Promise<string> {
  const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  expect(init.agentInfo).toMatchObject({ name: 'tessera' });
  return (await agent.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] })).sessionId;
}

describe('tessera acp (in-process)', () => {
  it('runs the demo task: tool calls stream, Write is asked for with its diff, the session is saved when stdin ends', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let stderr = '';
    const exit = runAcpCommand(['--provider', 'demo', ...TASK_TOOLS], {
      stdout: (text) => void stdout.write(text),
      stderr: (text) => void (stderr += text),
      cwd: workspace,
      env: env(),
      home,
      stdin,
    });
    const client = editor(Writable.toWeb(stdin) as WritableStream<Uint8Array>, Readable.toWeb(stdout) as ReadableStream<Uint8Array>, 'allow_once');
    const sessionId = await newSession(client.agent);
    const { stopReason } = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Summarise my notes' }] });

    expect(stopReason).toBe('end_turn');
    expect(client.of('tool_call').map((call) => call.kind)).toEqual(['execute', 'search', 'read', 'read', 'edit']);
    const write = client.of('tool_call').at(-1)!;
    expect(write.content?.[0]).toMatchObject({ type: 'diff', path: join(workspace, 'SUMMARY.md') });
    expect(client.asked.map((request) => request.toolCall.toolCallId)).toEqual([write.toolCallId]);
    expect(readFileSync(join(workspace, 'SUMMARY.md'), 'utf8')).toContain('Standup');
    expect(client.of('available_commands_update')[0]!.availableCommands.length).toBeGreaterThan(0);

    stdin.end();
    expect(await exit).toBe(0);
    expect(storedSessions().some((name) => name.endsWith(`_${sessionId}.jsonl`))).toBe(true);
    expect(stderr).not.toContain('Error');
  });

  it('--help prints the usage; a prompt argument is a usage error', async () => {
    let out = '';
    const io = { stdout: (text: string) => void (out += text), stderr: () => undefined, cwd: workspace, env: env(), home, stdin: new PassThrough() };
    expect(await runAcpCommand(['--help'], io)).toBe(0);
    expect(out).toContain('Usage: tessera acp');
    await expect(runAcpCommand(['hello'], io)).rejects.toThrow('tessera acp takes no prompt');
  });
});

/** Starts the built subcommand as `tessera acp` would run (process stdio, exit when it returns). */
function startProcess(argv: string[]): ChildProcessWithoutNullStreams {
  const launcher = `
    import { runAcpCommand } from ${JSON.stringify(pathToFileURL(DIST_ACP).href)};
    const io = { stdout: (t) => void process.stdout.write(t), stderr: (t) => void process.stderr.write(t), cwd: process.cwd(), env: process.env, home: process.env.HOME, stdin: process.stdin };
    const code = await runAcpCommand(${JSON.stringify(argv)}, io);
    process.stdout.write('', () => process.exit(code));`;
  return spawn(process.execPath, ['--input-type=module', '-e', launcher], { cwd: workspace, env: { ...env(), TESSERA_DEMO_DELAY_MS: '20' } });
}

const exited = (child: ChildProcessWithoutNullStreams): Promise<number | null> => new Promise((resolve) => child.on('close', resolve));

describe.skipIf(!existsSync(DIST_ACP))('tessera acp (a real process over stdio)', () => {
  it('serves a prompt, exits 0 on SIGTERM mid-turn saving the session, and a new process replays it with session/load', async () => {
    const first = startProcess(['--provider', 'demo', ...TASK_TOOLS]);
    let stderr = '';
    first.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const client = editor(Writable.toWeb(first.stdin) as WritableStream<Uint8Array>, Readable.toWeb(first.stdout) as ReadableStream<Uint8Array>, 'reject_once');
    const sessionId = await newSession(client.agent);
    const running = client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Summarise my notes' }] }).catch((error: unknown) => error);
    while (client.of('tool_call').length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    first.kill('SIGTERM');
    expect(await exited(first)).toBe(0);
    await running;
    expect(stderr).toBe('');
    expect(storedSessions().some((name) => name.endsWith(`_${sessionId}.jsonl`))).toBe(true);

    const second = startProcess(['--provider', 'demo']);
    const replay = editor(Writable.toWeb(second.stdin) as WritableStream<Uint8Array>, Readable.toWeb(second.stdout) as ReadableStream<Uint8Array>, 'reject_once');
    await replay.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const listed = await replay.agent.request(acp.methods.agent.session.list, { cwd: workspace });
    expect(listed.sessions.map((session) => session.sessionId)).toContain(sessionId);
    await replay.agent.request(acp.methods.agent.session.load, { sessionId, cwd: workspace, mcpServers: [] });
    expect(replay.of('user_message_chunk')[0]).toMatchObject({ content: { type: 'text', text: 'Summarise my notes' } });
    expect(replay.of('tool_call')[0]).toMatchObject({ kind: 'execute', status: 'completed', title: 'Bash: pwd' });
    second.stdin.end();
    expect(await exited(second)).toBe(0);
  });
});
