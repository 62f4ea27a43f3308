import { HookInventory } from '@tessera/contracts';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  ApprovalHandler,
  Diagnostics,
  SandboxPaths,
  ShellDirectories,
  type DiagnosticReport,
  type HooksConfig,
  type Message,
  type ToolExecutionEvent,
} from '@tessera/contracts';
import { createKernel, definePlugin, defineTool, PromptBlockedError, toolsPlugin, type Kernel } from '@tessera/kernel';
import { recordingApprovals, RecordingApprovalHandler } from '@tessera/kernel/testing';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { HookRunResult } from './hook-outcome.js';
import { hooksPlugin, type HooksPluginOptions } from './hooks-plugin.js';

let dir: string;
let kernel: Kernel | undefined;
const ran: unknown[] = [];
const echo = defineTool({
  name: 'Bash',
  description: 'fake bash',
  inputSchema: z.object({ command: z.string() }),
  execute: (input) => {
    ran.push(input);
    return { success: true, output: `ran ${input.command}` };
  },
});

beforeEach(async () => {
  ran.length = 0;
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-hooks-e2e-')));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Writes an executable shell script into the temp dir and returns its path. */
async function script(name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

const command = (cmd: string, extra: object = {}) => ({ hooks: [{ type: 'command' as const, command: cmd, ...extra }] });

async function start(config: HooksConfig, turns: unknown[], extra: Partial<HooksPluginOptions> = {}, plugins: unknown[] = []) {
  const results: HookRunResult[] = [];
  const provider = new ScriptedProvider({ turns: turns as never });
  kernel = await createKernel({
    plugins: testPreset({
      provider,
      plugins: [
        toolsPlugin(echo),
        hooksPlugin({ configs: [{ config, source: { file: join(dir, 'settings.json'), pluginRoot: join(dir, 'plugin') } }], onHookResult: (r) => results.push(r), ...extra }),
        ...(plugins as never[]),
      ],
    }),
  });
  const events: ToolExecutionEvent[] = [];
  const session = kernel.createSession({ cwd: dir, onToolExecution: (event) => events.push(event) });
  return { session, events, results, provider };
}

const bashCall = (cmd: string) => ({ toolCalls: [{ id: 'call_1', name: 'Bash', input: { command: cmd } }] });
const toolText = (history: readonly Message[]): string[] =>
  history.flatMap((m) => (m.role === 'tool' ? m.content.map((b) => String(b.content)) : []));

describe('PreToolUse', () => {
  it('blocks on exit 2 with stderr as the reason, and still emits the tool end event', async () => {
    const hook = await script('block.sh', 'cat > "$CLAUDE_PROJECT_DIR/input.json"\necho "no rm here" >&2\nexit 2');
    const { session, events } = await start({ PreToolUse: [{ matcher: 'Bash', ...command(hook) }] }, [bashCall('rm -rf /'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toEqual([]);
    expect(toolText(session.getHistory())).toEqual(['Blocked by hook: no rm here']);
    expect(events.at(-1)).toMatchObject({ type: 'end', denied: true, errorCode: 'blocked' });
    const input = JSON.parse(await readFile(join(dir, 'input.json'), 'utf8'));
    expect(input).toMatchObject({
      session_id: session.sessionId,
      cwd: dir,
      hook_event_name: 'PreToolUse',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /' },
      tool_use_id: 'call_1',
    });
    expect(input).toHaveProperty('transcript_path');
  });

  it("sends the shell's current directory as cwd, and runs command hooks there", async () => {
    const sub = join(dir, 'sub');
    await mkdir(sub);
    const hook = await script('where.sh', 'cat > "$CLAUDE_PROJECT_DIR/input.json"\npwd -P > "$CLAUDE_PROJECT_DIR/pwd.txt"');
    const shell = definePlugin({
      name: 'fake-shell-directories',
      provides: [ShellDirectories],
      register({ bind }) {
        bind(ShellDirectories).toConstantValue({ cwdFor: () => sub });
      },
    });
    const { session } = await start({ PreToolUse: [{ matcher: 'Bash', ...command(hook) }] }, [bashCall('ls'), { text: 'ok' }], {}, [shell]);
    await session.run('go');
    expect(JSON.parse(await readFile(join(dir, 'input.json'), 'utf8'))).toMatchObject({ cwd: sub });
    expect((await readFile(join(dir, 'pwd.txt'), 'utf8')).trim()).toBe(sub);
  });

  it('falls back to the session cwd when the shell directory is gone, and maps a sandbox directory to the host', async () => {
    const hook = await script('where.sh', 'cat > "$CLAUDE_PROJECT_DIR/input.json"');
    const sub = join(dir, 'sub');
    await mkdir(sub);
    let shellDir = join(dir, 'deleted');
    const shell = definePlugin({
      name: 'fake-shell-directories',
      provides: [ShellDirectories, SandboxPaths],
      register({ bind }) {
        bind(ShellDirectories).toConstantValue({ cwdFor: () => shellDir });
        bind(SandboxPaths).toConstantValue({ root: '/workspace' });
      },
    });
    const { session } = await start({ PreToolUse: [{ matcher: 'Bash', ...command(hook) }] }, [bashCall('ls'), { text: 'ok' }, bashCall('ls'), { text: 'ok' }], {}, [shell]);
    // Not under the sandbox root, and missing on the host: the session cwd.
    await session.run('go');
    expect(JSON.parse(await readFile(join(dir, 'input.json'), 'utf8'))).toMatchObject({ cwd: dir });
    shellDir = '/workspace/sub';
    await session.run('again');
    expect(JSON.parse(await readFile(join(dir, 'input.json'), 'utf8'))).toMatchObject({ cwd: sub });
    expect(ran).toHaveLength(2);
  });

  it('anchors `if` path rules at the session cwd, whatever the shell directory', async () => {
    const hook = await script('block.sh', 'echo "protected" >&2\nexit 2');
    const shell = definePlugin({
      name: 'fake-shell-directories',
      provides: [ShellDirectories],
      register({ bind }) {
        bind(ShellDirectories).toConstantValue({ cwdFor: () => '/tmp' });
      },
    });
    const write = defineTool({ name: 'Write', description: 'w', inputSchema: z.object({ file_path: z.string() }), execute: (input) => (ran.push(input), { success: true, output: 'written' }) });
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ id: 'w1', name: 'Write', input: { file_path: join(dir, 'protected', 'a.txt') } }] }, { text: 'ok' }] as never });
    kernel = await createKernel({
      plugins: testPreset({
        provider,
        plugins: [toolsPlugin(write), shell, hooksPlugin({ configs: [{ config: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: hook, if: 'Edit(./protected/**)' }] }] }, source: { file: join(dir, 'settings.json') } }] })],
      }),
    });
    const session = kernel.createSession({ cwd: dir });
    await session.run('write it');
    expect(ran).toEqual([]);
  });

  it('does not match BashOutput with a "Bash" matcher', async () => {
    const hook = await script('block.sh', 'exit 2');
    const { session } = await start({ PreToolUse: [{ matcher: 'BashOutput', ...command(hook) }] }, [bashCall('ls'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toHaveLength(1);
  });

  it('applies updatedInput and lets deny win over allow across handlers', async () => {
    const rewrite = await script('rewrite.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}'`);
    const { session } = await start({ PreToolUse: [command(rewrite)] }, [bashCall('ls'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toEqual([{ command: 'ls -la' }]);
    await kernel!.shutdown();
    ran.length = 0;
    const deny = await script('deny.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy says no"}}'`);
    const second = await start({ PreToolUse: [command(rewrite), command(deny)] }, [bashCall('ls'), { text: 'ok' }]);
    await second.session.run('go');
    expect(ran).toEqual([]);
    expect(toolText(second.session.getHistory())).toEqual(['Blocked by hook: policy says no']);
  });

  it('sends "ask" through the approval chain (the bound ApprovalHandler)', async () => {
    const ask = await script('ask.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"double-check"}}'`);
    const { session } = await start({ PreToolUse: [command(ask)] }, [bashCall('ls'), { text: 'ok' }], {}, [recordingApprovals(false)]);
    await session.run('go');
    expect(ran).toEqual([]);
    expect(toolText(session.getHistory())[0]).toMatch(/^Blocked by hook: double-check; not approved: the user declined/);
    await kernel!.shutdown();
    const approved = await start({ PreToolUse: [command(ask)] }, [bashCall('ls'), { text: 'ok' }], { permissionHandler: () => true });
    await approved.session.run('go');
    expect(ran).toHaveLength(1);
  });

  it('runs a handler with an "if" rule only when the rule matches the call', async () => {
    const hook = await script('if.sh', 'exit 2');
    const config = { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command' as const, command: hook, if: 'Bash(git push:*)' }] }] };
    const { session } = await start(config, [bashCall('git status'), bashCall('ls && git push origin'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toEqual([{ command: 'git status' }]);
  });

  it('treats other exit codes as non-blocking notices and runs matching handlers in parallel', async () => {
    const a = await script('a.sh', 'sleep 0.3; echo a >> "$CLAUDE_PROJECT_DIR/order"');
    const b = await script('b.sh', 'echo b >> "$CLAUDE_PROJECT_DIR/order"; echo oops >&2; exit 1');
    const { session, results } = await start({ PreToolUse: [command(a), command(b)] }, [bashCall('ls'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toHaveLength(1);
    expect(await readFile(join(dir, 'order'), 'utf8')).toBe('b\na\n');
    expect(results[0]?.notices[0]).toMatch(/failed with exit code 1: oops/);
  });

  it('on {"continue": false} blocks the call and the rest of the turn, telling the model to stop but not the user\'s stopReason', async () => {
    const hook = await script('halt.sh', `echo '{"continue":false,"stopReason":"out of budget"}'`);
    const call = (cmd: string, id: string) => ({ toolCalls: [{ id, name: 'Bash', input: { command: cmd } }] });
    const { session } = await start({ PreToolUse: [{ matcher: 'Bash', ...command(hook, { if: 'Bash(first)' }) }] }, [call('first', 'a'), call('second', 'b'), { text: 'stopped' }]);
    await session.run('go');
    expect(ran).toEqual([]);
    const texts = toolText(session.getHistory());
    expect(texts).toHaveLength(2);
    for (const text of texts) expect(text).toMatch(/^Blocked by hook: A hook stopped the agent/);
    expect(texts.join('\n')).not.toContain('out of budget');
  });

  it('kills the whole process group on timeout and fails open', async () => {
    const hook = await script('slow.sh', `(sleep 30; touch "$CLAUDE_PROJECT_DIR/survived") &\necho $! > "$CLAUDE_PROJECT_DIR/child.pid"\nsleep 30\nexit 2`);
    const { session, results } = await start({ PreToolUse: [command(hook, { timeout: 0.5 })] }, [bashCall('ls'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toHaveLength(1);
    expect(results[0]?.notices[0]).toMatch(/timed out/);
    const pid = Number(await readFile(join(dir, 'child.pid'), 'utf8'));
    // Gone, or a zombie waiting for a reaper (containers often have none): not running either way.
    const state = await readFile(`/proc/${pid}/stat`, 'utf8').then((text) => text.split(') ')[1]?.[0], () => 'gone');
    expect(['gone', 'Z', 'X']).toContain(state);
  });
});

describe('prompt and session events', () => {
  it('does not send a blocked prompt to the model', async () => {
    const hook = await script('gate.sh', 'echo "secrets in prompt" >&2; exit 2');
    const { session, provider } = await start({ UserPromptSubmit: [command(hook)] }, [{ text: 'never' }]);
    await expect(session.run('my password is hunter2')).rejects.toBeInstanceOf(PromptBlockedError);
    expect(provider.requests).toHaveLength(0);
    expect(session.getHistory()).toEqual([]);
  });

  it('UserPromptSubmit gets what the user typed (rawPrompt) when the prompt was expanded from it', async () => {
    const hook = await script('typed.sh', 'cat >> "$CLAUDE_PROJECT_DIR/prompts"; echo >> "$CLAUDE_PROJECT_DIR/prompts"');
    const { session, provider } = await start({ UserPromptSubmit: [command(hook)] }, [{ text: 'a' }, { text: 'b' }]);
    await session.run('Audit src for unsafe code (the skill prompt)', { rawPrompt: '/audit src' });
    await session.run('plain');
    const inputs = (await readFile(join(dir, 'prompts'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { prompt: string });
    expect(inputs.map((input) => input.prompt)).toEqual(['/audit src', 'plain']);
    expect(JSON.stringify(provider.requests[0]!.messages[0])).toContain('the skill prompt');
  });

  it('adds UserPromptSubmit plain stdout and SessionStart stdout (first prompt only) to the context', async () => {
    const start1 = await script('start.sh', 'echo "project uses pnpm"');
    const prompt = await script('prompt.sh', `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"today is Monday"}}'`);
    const { session, provider } = await start({ SessionStart: [{ matcher: 'startup', ...command(start1) }], UserPromptSubmit: [command(prompt)] }, [{ text: 'a' }, { text: 'b' }]);
    await session.run('one');
    await session.run('two');
    const first = JSON.stringify(provider.requests[0]!.messages[0]);
    expect(first).toContain('project uses pnpm');
    expect(first).toContain('today is Monday');
    const second = JSON.stringify(provider.requests[1]!.messages.at(-1));
    expect(second).not.toContain('project uses pnpm');
    expect(second).toContain('today is Monday');
  });

  it('continues the turn when a Stop hook blocks, with stop_hook_active on the next call, at most 8 times', async () => {
    const hook = await script('stop.sh', `cat >> "$CLAUDE_PROJECT_DIR/stops"\necho >> "$CLAUDE_PROJECT_DIR/stops"\necho '{"decision":"block","reason":"run the tests first"}'`);
    const turns = Array.from({ length: 10 }, (_, i) => ({ text: `answer ${i}` }));
    const { session, provider } = await start({ Stop: [command(hook)] }, turns);
    await session.run('go');
    expect(provider.requests).toHaveLength(9);
    const inputs = (await readFile(join(dir, 'stops'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    expect(inputs[0]).toMatchObject({ hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'answer 0' });
    expect(inputs[1]).toMatchObject({ stop_hook_active: true });
    expect(JSON.stringify(provider.requests[1]!.messages.at(-1))).toContain('run the tests first');
  });

  it('passes CLAUDE_PROJECT_DIR and CLAUDE_PLUGIN_ROOT, and fires SessionEnd with its reason', async () => {
    const hook = await script('env.sh', 'echo "$CLAUDE_PROJECT_DIR|$CLAUDE_PLUGIN_ROOT" > "$CLAUDE_PROJECT_DIR/env.txt"');
    const { session } = await start({ SessionEnd: [{ matcher: 'other', ...command(hook) }] }, []);
    await session.shutdown();
    expect((await readFile(join(dir, 'env.txt'), 'utf8')).trim()).toBe(`${dir}|${join(dir, 'plugin')}`);
  });

  it('adds PostToolUse feedback (exit 2 stderr) to the tool result the model sees', async () => {
    const hook = await script('post.sh', 'echo "lint failed: missing semicolon" >&2; exit 2');
    const { session } = await start({ PostToolUse: [{ matcher: 'Bash', ...command(hook) }] }, [bashCall('ls'), { text: 'ok' }]);
    await session.run('go');
    expect(toolText(session.getHistory())[0]).toBe('ran ls\n\n<hook-feedback>\nlint failed: missing semicolon\n</hook-feedback>');
  });

  it('adds PreToolUse additionalContext to the result of the call, where the model sees it', async () => {
    const hook = await script('context.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"this repo uses pnpm, not npm"}}'`);
    const { session } = await start({ PreToolUse: [{ matcher: 'Bash', ...command(hook) }] }, [bashCall('npm test'), { text: 'ok' }]);
    await session.run('go');
    expect(toolText(session.getHistory())).toEqual(['ran npm test\n\n<hook-feedback>\nthis repo uses pnpm, not npm\n</hook-feedback>']);
  });

  it('ends the turn\'s tool calls after a PostToolUse {"continue": false}, and the next prompt runs tools again', async () => {
    const hook = await script('halt.sh', `echo '{"continue":false,"stopReason":"tests are red"}'`);
    const call = (cmd: string, id: string) => ({ toolCalls: [{ id, name: 'Bash', input: { command: cmd } }] });
    const { session, results } = await start({ PostToolUse: [{ matcher: 'Bash', ...command(hook) }] }, [call('first', 'a'), call('second', 'b'), { text: 'stopped' }, call('third', 'c'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toEqual([{ command: 'first' }]);
    const [first, second] = toolText(session.getHistory());
    expect(first).toContain('"continue": false');
    expect(second).toMatch(/^Blocked by hook: A hook stopped the agent/);
    expect(second).not.toContain('tests are red'); // the stop reason is for the user
    expect(results[0]?.stop).toEqual({ reason: 'tests are red' });
    await session.run('again');
    expect(ran).toEqual([{ command: 'first' }, { command: 'third' }]);
  });
});

describe('http, prompt and agent hooks', () => {
  let server: Server;
  let received: Array<{ body: unknown; headers: IncomingHttpHeaders }>;
  let status = 200;
  let reply = '{}';
  beforeEach(async () => {
    received = [];
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        received.push({ body: JSON.parse(body), headers: request.headers });
        response.writeHead(status, { 'content-type': 'application/json' }).end(reply);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  it('POSTs the input, reads a 2xx JSON body, and interpolates only allowed env vars into headers', async () => {
    process.env.TESSERA_HOOK_TOKEN = 'secret-token';
    process.env.TESSERA_OTHER = 'leak';
    reply = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'remote policy' } });
    const handler = { type: 'http' as const, url: url(), headers: { Authorization: 'Bearer $TESSERA_HOOK_TOKEN', 'X-Other': '${TESSERA_OTHER}' }, allowedEnvVars: ['TESSERA_HOOK_TOKEN'] };
    const { session } = await start({ PreToolUse: [{ hooks: [handler] }] }, [bashCall('ls'), { text: 'ok' }]);
    await session.run('go');
    expect(ran).toEqual([]);
    expect(toolText(session.getHistory())).toEqual(['Blocked by hook: remote policy']);
    expect(received[0]?.body).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash' });
    expect(received[0]?.headers.authorization).toBe('Bearer secret-token');
    expect(received[0]?.headers['x-other']).toBe('');
  });

  it('never blocks on a non-2xx response', async () => {
    status = 500;
    reply = 'boom';
    const { session, results } = await start({ PreToolUse: [{ hooks: [{ type: 'http', url: url() }] }] }, [bashCall('ls'), { text: 'ok' }]);
    await session.run('go');
    status = 200;
    expect(ran).toHaveLength(1);
    expect(results[0]?.notices[0]).toMatch(/HTTP 500/);
  });

  it('asks the session provider for {ok, reason} in a prompt hook', async () => {
    const config = { Stop: [{ hooks: [{ type: 'prompt' as const, prompt: 'Is the task done? $ARGUMENTS' }] }] };
    const { session, provider } = await start(config, [{ text: 'first answer' }, { text: '{"ok": false, "reason": "tests missing"}' }, { text: 'second answer' }, { text: '{"ok": true}' }]);
    const answer = await session.run('go');
    expect(answer).toBe('second answer');
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('Is the task done?');
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('first answer');
    expect(JSON.stringify(provider.requests[2]!.messages.at(-1))).toContain('tests missing');
  });

  it('reports an agent hook without a subagent runner as a configuration error naming the hook', async () => {
    const config = { Stop: [{ hooks: [{ type: 'agent' as const, prompt: 'verify' }] }] };
    const { session, results } = await start(config, [{ text: 'done' }]);
    await expect(session.run('go')).resolves.toBe('done');
    expect(results[0]?.notices[0]).toMatch(/settings\.json hooks\.Stop\[0\]\.hooks\[0\] is an "agent" hook, but no subagent runner/);
  });

  it('runs agent hooks through runAgentHook when given', async () => {
    const config = { PreToolUse: [{ hooks: [{ type: 'agent' as const, prompt: 'check $ARGUMENTS' }] }] };
    const { session } = await start(config, [bashCall('ls'), { text: 'ok' }], {
      runAgentHook: async ({ prompt }) => ({ ok: !prompt.includes('"ls"'), reason: 'agent refused ls' }),
    });
    await session.run('go');
    expect(toolText(session.getHistory())).toEqual(['Blocked by hook: agent refused ls']);
  });
});

describe('hooksPlugin and the kernel seams', () => {
  const recordingDiagnostics = (reports: DiagnosticReport[]) =>
    definePlugin({
      name: 'recording-diagnostics',
      provides: [Diagnostics],
      register({ bind }) {
        bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(report) });
      },
    });

  it('reports file problems and hook notices to the bound Diagnostics, never as process warnings', async () => {
    const reports: DiagnosticReport[] = [];
    const warnings = vi.spyOn(process, 'emitWarning');
    try {
      const broken = join(dir, 'broken.json');
      await writeFile(broken, '{ "hooks": ');
      const failing = await script('fail.sh', 'echo oops >&2; exit 1');
      const config: HooksConfig = { PreToolUse: [command(failing)], Notification: [command(failing)] };
      kernel = await createKernel({
        plugins: testPreset({
          turns: [bashCall('ls'), { text: 'ok' }],
          plugins: [toolsPlugin(echo), recordingDiagnostics(reports), hooksPlugin({ configs: [{ config, source: { file: join(dir, 'settings.json') } }], files: [broken] })],
        }),
      });
      expect(reports).toEqual([expect.objectContaining({ severity: 'error', code: 'TESSERA_HOOKS_CONFIG', source: 'claude-hooks', file: broken, message: expect.stringMatching(/invalid JSON/) })]);
      await kernel.createSession({ cwd: dir }).run('go');
      expect(ran).toHaveLength(1);
      expect(reports[1]).toMatchObject({ severity: 'warning', code: 'TESSERA_HOOK_NOTICE', source: 'claude-hooks', message: expect.stringMatching(/failed with exit code 1: oops/) });
      // An event without a session reports through the kernel's reporter too.
      await kernel.hooks.notification.promise({ message: 'hi', notificationType: 'idle' });
      expect(reports).toHaveLength(3);
      expect(reports[2]).toMatchObject({ code: 'TESSERA_HOOK_NOTICE' });
      expect(warnings).not.toHaveBeenCalled();
    } finally {
      warnings.mockRestore();
    }
  });

  it('reports systemMessages and continue:false stop reasons to the bound Diagnostics when no onHookResult is given', async () => {
    const reports: DiagnosticReport[] = [];
    const hook = await script('message.sh', `echo '{"systemMessage":"lint found 3 problems","continue":false,"stopReason":"fix lint first"}'`);
    kernel = await createKernel({
      plugins: testPreset({
        turns: [bashCall('ls'), { text: 'ok' }],
        plugins: [toolsPlugin(echo), recordingDiagnostics(reports), hooksPlugin({ configs: [{ config: { PostToolUse: [command(hook)] }, source: { file: join(dir, 'settings.json') } }] })],
      }),
    });
    await kernel.createSession({ cwd: dir }).run('go');
    expect(reports).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'TESSERA_HOOK_MESSAGE', source: 'claude-hooks', message: 'lint found 3 problems' }),
      expect.objectContaining({ code: 'TESSERA_HOOK_MESSAGE', message: 'PostToolUse hook stopped the agent: fix lint first' }),
    ]);
  });

  it('asks the ApprovalHandler the session sees for an "ask" hook: a rebind reaches sessions created afterwards', async () => {
    const ask = await script('ask.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'`);
    const { session } = await start({ PreToolUse: [command(ask)] }, [bashCall('ls'), { text: 'a' }, bashCall('ls'), { text: 'b' }], {}, [recordingApprovals(false)]);
    await session.run('go');
    expect(ran).toEqual([]);
    const approving = new RecordingApprovalHandler(true);
    kernel!.container.rebind(ApprovalHandler).toConstantValue(approving);
    const later = kernel!.createSession({ cwd: dir });
    await later.run('go');
    expect(ran).toHaveLength(1);
    expect(approving.requests.map((request) => request.sessionId)).toEqual([later.sessionId]);
  });

  it('reads nothing in the factory: one plugin value composes into two kernels, each reading its files into its own runner', async () => {
    const settings = join(dir, 'settings.json');
    const saved = process.env;
    let plugin: ReturnType<typeof hooksPlugin>;
    try {
      process.env = {};
      expect(() => hooksPlugin()).not.toThrow();
      // The file does not exist yet: the factory must not read it.
      plugin = hooksPlugin({ files: [settings] });
    } finally {
      process.env = saved;
    }
    const hook = await script('where.sh', 'pwd -P >> "$CLAUDE_PROJECT_DIR/runs"');
    await writeFile(settings, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] } }));
    // Each kernel's shell is somewhere else: a hook that ran with the other kernel's services would say so.
    const shellAt = (where: string) =>
      definePlugin({
        name: 'fake-shell-directories',
        provides: [ShellDirectories],
        register({ bind }) {
          bind(ShellDirectories).toConstantValue({ cwdFor: () => where });
        },
      });
    const [one, two] = [join(dir, 'one'), join(dir, 'two')];
    await mkdir(one);
    await mkdir(two);
    const boot = (where: string) => createKernel({ plugins: testPreset({ turns: [bashCall('ls'), { text: 'ok' }], plugins: [toolsPlugin(echo), shellAt(where), plugin] }) });
    const first = await boot(one);
    const second = await boot(two);
    const runs = async () => (await readFile(join(dir, 'runs'), 'utf8')).trim().split('\n');
    try {
      await first.createSession({ cwd: dir }).run('go');
      // One handler, run in this kernel's shell directory: the second boot changed nothing here.
      expect(await runs()).toEqual([one]);
      await second.createSession({ cwd: dir }).run('go');
      expect(await runs()).toEqual([one, two]);
      expect(ran).toHaveLength(2);
    } finally {
      await first.shutdown();
      await second.shutdown();
    }
  });

  it('rejects unusable files and configs entries when the plugin is made', () => {
    expect(() => hooksPlugin({ files: [''] })).toThrow(/files\[0\] must be a path/);
    expect(() => hooksPlugin({ configs: [{ config: null as never, source: { file: 'x' } }] })).toThrow(/configs\[0\]/);
  });

  it('declares the tokens it uses when present', async () => {
    kernel = await createKernel({ plugins: testPreset({ plugins: [hooksPlugin()] }) });
    expect(kernel.describe().plugins.find((plugin) => plugin.name === 'claude-hooks')).toMatchObject({
      provides: ['HookInventory'],
      requires: [],
      optional: ['Provider', 'SubagentLauncher', 'ShellDirectories', 'SandboxPaths', 'ApprovalHandler', 'Diagnostics', 'HooksConfigSource'],
    });
  });

  it('lists what is configured and from where (HookInventory)', async () => {
    kernel = await createKernel({
      plugins: testPreset({
        plugins: [hooksPlugin({ configs: [{ config: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo checked' }] }] }, source: { file: '/project/.claude/settings.json' } }] })],
      }),
    });
    expect(kernel.get(HookInventory).list()).toEqual([
      { event: 'PreToolUse', matcher: 'Bash', type: 'command', summary: 'echo checked', file: '/project/.claude/settings.json', location: expect.stringContaining('PreToolUse') },
    ]);
  });
});
