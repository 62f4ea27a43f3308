import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Diagnostics } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession, type Kernel } from '@tessera/kernel';
import { reversibleExecution } from '@tessera/plugin-checkpoints';
import { agentCommand } from '@tessera/plugin-commands';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { subagents } from '@tessera/plugin-subagents';
import { builtinTools, InMemorySandboxClient } from '@tessera/plugin-tools';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// Spec (Sandbox Execution): an InteractiveSession given a sandboxClient routes its Bash, Read,
// Write and Edit through that client, even when the kernel's tools were composed for the host
// (plain `builtinTools()`), and only that session's.

let dir: string;
let kernel: Kernel | undefined;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-sandbox-session-')));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

type Turn = { toolCalls: Array<{ name: string; input: Record<string, unknown> }> } | { text: string };

/** Diagnostics codes reported while the kernel runs. */
function collectDiagnostics() {
  const codes: string[] = [];
  const plugin = definePlugin({ name: 'collect-diagnostics', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void codes.push(String(report.code)) }) });
  return { codes, plugin };
}

/** Each tool result of the session so far, in order: [tool name, failed, output]. */
const toolResults = (session: InteractiveSession): Array<[string, boolean, string]> =>
  session
    .getSession()
    .getHistory()
    .flatMap((message) => (message.role === 'tool' ? message.content.map((block): [string, boolean, string] => [block.toolName, block.isError, String(block.content)]) : []));

describe('InteractiveSession with a sandboxClient on a host-composed kernel', () => {
  it('runs Write, Read and Bash through the client, not on the host; another session of the kernel stays on the host; no warning', async () => {
    const diagnostics = collectDiagnostics();
    const turns: Turn[] = [
      { toolCalls: [{ name: 'Write', input: { file_path: '/workspace/notes.txt', content: 'in the sandbox\n' } }] },
      { toolCalls: [{ name: 'Read', input: { file_path: '/workspace/notes.txt' } }] },
      { toolCalls: [{ name: 'Bash', input: { command: 'echo sandboxed' } }] },
      { text: 'sandboxed turn done' },
      { toolCalls: [{ name: 'Write', input: { file_path: join(dir, 'host.txt'), content: 'on the host\n' } }] },
      { text: 'host turn done' },
    ];
    kernel = await createKernel({ plugins: testPreset({ turns: turns as never, plugins: [...builtinTools(), diagnostics.plugin] }) });
    const client = new InMemorySandboxClient();
    const sandboxed = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client });
    const first = await sandboxed.submit('use the sandbox');
    expect(first?.response).toBe('sandboxed turn done');
    const [write, read, bash] = toolResults(sandboxed);
    expect(write?.[1]).toBe(false);
    expect(read).toEqual(['Read', false, expect.stringContaining('in the sandbox')]);
    expect(bash).toEqual(['Bash', false, expect.stringContaining('sandboxed')]);
    expect(new TextDecoder().decode(await client.readFile('/workspace/notes.txt'))).toBe('in the sandbox\n');
    expect(existsSync(join(dir, 'notes.txt'))).toBe(false);
    expect(existsSync('/workspace/notes.txt')).toBe(false);
    expect(client.commands.map((command) => command.command)).toEqual(['echo sandboxed']);
    expect(diagnostics.codes).not.toContain('TESSERA_SANDBOX_TOOLS_UNSANDBOXED');

    // The same kernel, no client: the host tools, as composed.
    const host = new InteractiveSession({ kernel, cwd: dir });
    const second = await host.submit('use the host');
    expect(second?.response).toBe('host turn done');
    expect(await readFile(join(dir, 'host.txt'), 'utf8')).toBe('on the host\n');
    expect(await client.stat(join(dir, 'host.txt'))).toBeUndefined();
    await Promise.all([sandboxed.shutdown(), host.shutdown()]);
  });

  it("judges the session's sandbox paths as host paths: Write(./secret/**) refuses <root>/secret/a", async () => {
    const turns: Turn[] = [
      { toolCalls: [{ name: 'Write', input: { file_path: '/workspace/secret/a', content: 'nope' } }] },
      { toolCalls: [{ name: 'Write', input: { file_path: '/workspace/open/b', content: 'yes' } }] },
      { text: 'done' },
    ];
    kernel = await createKernel({
      plugins: testPreset({ turns: turns as never, replace: [permissionsPlugin({ rules: { allow: ['Write'], deny: ['Write(./secret/**)'] } })], plugins: builtinTools() }),
    });
    const client = new InMemorySandboxClient();
    const session = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client });
    await session.submit('write both');
    const [secret, open] = toolResults(session);
    expect(secret).toEqual(['Write', true, expect.stringMatching(/denied/i)]);
    expect(open?.[1]).toBe(false);
    expect(await client.stat('/workspace/secret/a')).toBeUndefined();
    expect(new TextDecoder().decode(await client.readFile('/workspace/open/b'))).toBe('yes');
    await session.shutdown();
  });

  it('treats the sandboxed session as provider-sandbox isolated under reversible execution (Bash and Write run)', async () => {
    const turns: Turn[] = [
      { toolCalls: [{ name: 'Bash', input: { command: 'echo isolated' } }] },
      { toolCalls: [{ name: 'Write', input: { file_path: '/workspace/r.txt', content: 'r' } }] },
      { text: 'done' },
    ];
    kernel = await createKernel({ plugins: testPreset({ turns: turns as never, plugins: [...builtinTools(), reversibleExecution({ mode: 'local-first' })] }) });
    const client = new InMemorySandboxClient();
    const session = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client });
    await session.submit('run');
    expect(toolResults(session).map(([name, failed]) => [name, failed])).toEqual([
      ['Bash', false],
      ['Write', false],
    ]);
    expect(client.commands.map((command) => command.command)).toEqual(['echo isolated']);
    await session.shutdown();
  });

  it('gives a subagent started from the sandboxed session the same sandboxed tools', async () => {
    const turns: Turn[] = [
      // The parent asks the model-invocable /agent command for a subagent…
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: 'general-purpose write the file' } }] },
      // …whose child session writes a file…
      { toolCalls: [{ name: 'Write', input: { file_path: '/workspace/from-agent.txt', content: 'agent was here\n' } }] },
      { text: 'agent done' },
      { text: 'parent done' },
    ];
    kernel = await createKernel({
      plugins: testPreset({ turns: turns as never, plugins: [...builtinTools(), subagents({ cwd: dir, home: dir, discover: false, worktree: false, contextFiles: false }), agentCommand()] }),
    });
    const client = new InMemorySandboxClient();
    const session = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client });
    const result = await session.submit('delegate');
    expect(result?.response).toBe('parent done');
    expect(toolResults(session)).toEqual([['tessera_command_agent', false, expect.stringContaining('agent done')]]);
    expect(new TextDecoder().decode(await client.readFile('/workspace/from-agent.txt'))).toBe('agent was here\n');
    expect(existsSync(join(dir, 'from-agent.txt'))).toBe(false);
    await session.shutdown();
  });

  it('offers exactly the tools of a kernel-wide sandbox: the host BashOutput and KillShell are gone, and a call to one is an unknown tool', async () => {
    const client = new InMemorySandboxClient();
    const wide = await createKernel({ plugins: testPreset({ turns: [], plugins: builtinTools({ sandbox: { client } }) }) });
    const expected = [...wide.createSession().toolsByName.keys()].sort();
    await wide.shutdown();
    expect(expected).not.toContain('BashOutput');

    const turns: Turn[] = [{ toolCalls: [{ name: 'KillShell', input: { shell_id: 'shell_1' } }] }, { text: 'done' }];
    kernel = await createKernel({ plugins: testPreset({ turns: turns as never, plugins: builtinTools() }) });
    const session = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client });
    await session.whenReady();
    expect([...session.getSession().toolsByName.keys()].sort()).toEqual(expected);
    expect(kernel.sessionScope(session.getSession())?.removeTools).toEqual(['BashOutput', 'KillShell']);
    await session.submit('stop a shell');
    expect(toolResults(session)).toEqual([['KillShell', true, expect.stringContaining('is not available')]]);
    // A session of the same kernel without a client keeps them.
    expect([...kernel.createSession().toolsByName.keys()]).toEqual(expect.arrayContaining(['BashOutput', 'KillShell']));
    await session.shutdown();
  });

  it('still warns when no SandboxToolFactory is bound (a kernel without builtinTools), saying what to compose', async () => {
    const diagnostics = collectDiagnostics();
    kernel = await createKernel({ plugins: testPreset({ turns: [], plugins: [diagnostics.plugin] }) });
    const session = new InteractiveSession({ kernel, cwd: dir, sandboxClient: new InMemorySandboxClient() });
    await session.whenReady();
    expect(diagnostics.codes).toEqual(['TESSERA_SANDBOX_TOOLS_UNSANDBOXED']);
    await session.shutdown();
  });
});
