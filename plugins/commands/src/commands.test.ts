import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SubagentLauncher, type TCommandEffect } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession, type Kernel } from '@tessera/kernel';
import { backgroundRuntime } from '@tessera/plugin-background';
import { editCheckpoints } from '@tessera/plugin-checkpoints';
import { compaction } from '@tessera/plugin-compaction';
import { contextWindow } from '@tessera/plugin-context-window';
import { hooksPlugin } from '@tessera/plugin-hooks';
import { projectMemory } from '@tessera/plugin-memory';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinCommands, legacyModeCommand } from './index.js';

let dir: string;
let kernel: Kernel | undefined;
let session: InteractiveSession;

const fakeLauncher = definePlugin({
  name: 'fake-launcher',
  provides: [SubagentLauncher],
  register: ({ bind }) => void bind(SubagentLauncher).toConstantValue({ launch: async (request) => ({ text: `${request.agentType} did: ${request.prompt}${request.background ? ' (background)' : ''}${request.isolation ? ` (${request.isolation})` : ''}`, agentId: 'agent-1' }) }),
});

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-commands-')));
  kernel = await createKernel({
    plugins: testPreset({
      turns: [{ text: 'first answer', usage: { inputTokens: 120, outputTokens: 30 } }, { text: 'A summary of the talk.' }],
      plugins: [
        ...builtinCommands(),
        legacyModeCommand(),
        compaction(),
        contextWindow(),
        editCheckpoints(),
        backgroundRuntime(),
        fakeLauncher,
        projectMemory(),
        hooksPlugin({ configs: [{ config: { Stop: [{ hooks: [{ type: 'command', command: 'echo stop' }] }] }, source: { file: join(dir, '.claude/settings.json') } }] }),
      ],
    }),
  });
  session = new InteractiveSession({ kernel, cwd: dir });
  await session.submit('hello there');
});

afterEach(async () => {
  await session.shutdown();
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

type Row = {
  command: string;
  args?: string;
  success: boolean;
  message: RegExp;
  effects?: TCommandEffect[];
};

const rows: Row[] = [
  { command: 'help', success: true, message: /\/compact +Compact the conversation/ },
  { command: 'help', args: 'rewind', success: true, message: /^\/rewind list \| inspect <id>/ },
  { command: 'help', args: 'nope', success: false, message: /No command "nope"\.\nUsage: \/help \[command\]/ },
  { command: 'cost', success: true, message: /^Session .+: 2 messages\. Tokens: 120 in, 30 out\.$/ },
  { command: 'context', success: true, message: /^Context: \d+ \/ \d+ tokens .*Auto-compact at 83\.5%\.$/ },
  { command: 'context', args: 'auto 50', success: true, message: /Auto-compact at 50% of the context window\./ },
  { command: 'context', args: 'auto off', success: true, message: /Auto-compact turned off\./ },
  { command: 'context', args: 'auto 500', success: false, message: /"500" is not a percentage between 1 and 100\.\nUsage: \/context auto/ },
  { command: 'permissions', success: true, message: /^Permission mode: default/ },
  { command: 'permissions', args: 'plan', success: true, message: /^Permission mode: plan \(read-only/ },
  { command: 'permissions', args: 'yolo', success: false, message: /Unknown permission mode "yolo"\. Modes: default, acceptEdits, plan, bypassPermissions, dontAsk\.\nUsage/ },
  { command: 'mode', args: 'acceptEdits', success: true, message: /^Permission mode: acceptEdits/ },
  { command: 'model', success: true, message: /^Model: .+\(provider scripted\)\.$/ },
  { command: 'model', args: 'claude-opus-4-5', success: true, message: /Switching to claude-opus-4-5/, effects: [{ type: 'model-change-requested', modelId: 'claude-opus-4-5' }] },
  { command: 'language', args: 'Korean', success: true, message: /Korean/, effects: [{ type: 'language-change-requested', language: 'Korean' }] },
  { command: 'language', success: false, message: /A language is required/ },
  { command: 'rename', args: '"my  work"', success: true, message: /renamed to "my work"/, effects: [{ type: 'session-renamed', name: 'my work' }] },
  { command: 'rename', success: false, message: /A name is required\.\nUsage: \/rename <name>/ },
  { command: 'resume', success: true, message: /Choose a session/, effects: [{ type: 'session-picker-requested' }] },
  { command: 'exit', success: true, message: /Goodbye/, effects: [{ type: 'session-exit-requested', reason: 'prompt_input_exit' }] },
  { command: 'reset', success: true, message: /reset/, effects: [{ type: 'settings-reset-requested' }] },
  { command: 'statusline', args: 'branch off', success: true, message: /updated/, effects: [{ type: 'statusline-settings-patch', patch: { showGitBranch: false } }] },
  { command: 'statusline', args: 'sideways', success: false, message: /Unknown arguments "sideways"/ },
  { command: 'provider', success: true, message: /^Provider: scripted/ },
  { command: 'provider', args: 'list', success: false, message: /needs provider profiles/ },
  { command: 'hooks', success: true, message: /^Stop +command: echo stop\n +from .+settings\.json/ },
  { command: 'mcp', success: true, message: /No MCP servers are configured/ },
  { command: 'plugin', success: true, message: /plugin manager/, effects: [{ type: 'plugin-tui-requested' }] },
  { command: 'reload-plugins', success: true, message: /Reloading/, effects: [{ type: 'plugin-registry-reload-requested' }] },
  { command: 'background', success: true, message: /No background tasks/ },
  { command: 'background', args: 'log', success: false, message: /Name a task/ },
  { command: 'background', args: 'frobnicate', success: false, message: /Unknown subcommand "frobnicate"/ },
  { command: 'rewind', success: true, message: /^0001-[0-9a-f]{8} +0 file\(s\) +hello there$/ },
  { command: 'rewind', args: 'inspect', success: false, message: /Name a checkpoint/ },
  { command: 'rewind', args: 'restore 9999-00000000', success: false, message: /9999-00000000/ },
  { command: 'agent', args: 'Explore find the tests', success: true, message: /^Explore did: find the tests$/ },
  { command: 'agent', args: '--background --worktree general-purpose refactor it', success: true, message: /^general-purpose did: refactor it \(background\) \(worktree\)$/ },
  { command: 'agent', args: 'Explore', success: false, message: /Name an agent type and a task/ },
  { command: 'doctor', success: true, message: /Plugins \(\d+\):[\s\S]*command-help: contributes CommandContribution[\s\S]*Provider: scripted/ },
  { command: 'memory', success: true, message: /No project memory yet/ },
  { command: 'memory', args: 'add project build Run npm run build before tests', success: true, message: /^Saved to build\.$/ },
  { command: 'memory', args: 'add user creds password=hunter2secret', success: false, message: /^Not saved: / },
  { command: 'memory', args: 'add nonsense t x', success: false, message: /Unknown kind "nonsense"\.\nUsage: \/memory add/ },
  { command: 'memory', args: 'show nope', success: false, message: /No memory topic "nope"/ },
  { command: 'memory', args: 'approve', success: false, message: /Name a pending entry/ },
  { command: 'memory', args: 'used', success: true, message: /No memory was used/ },
  { command: 'clear', success: true, message: /Conversation cleared/, effects: [{ type: 'conversation-history-cleared' }] },
];

describe('commands over a real InteractiveSession', () => {
  it.each(rows)('/$command $args', async ({ command, args, success, message, effects }) => {
    const result = await session.executeCommand(command, args ?? '');
    expect(result, `no command ${command}`).not.toBeNull();
    expect(result!.message).toMatch(message);
    expect(result!.success).toBe(success);
    if (effects) expect(result!.effects).toEqual(effects);
  });

  it('/compact summarises with the model and reports the context before and after', async () => {
    const result = await session.executeCommand('compact');
    expect(result).toMatchObject({ success: true, message: expect.stringMatching(/^Conversation compacted\. Context: \d+ → \d+ tokens/) });
    expect(JSON.stringify(session.getMessages())).toContain('A summary of the talk.');
  });

  it('/permissions changes the session mode; the model cannot change it', async () => {
    await session.executeCommand('permissions', 'plan');
    expect(session.getSession().getPermissionMode()).toBe('plan');
  });

  it('/permissions refuses a mode the host does not allow and lists only the allowed ones', async () => {
    session.getSession().limitPermissionModes(['default', 'acceptEdits', 'plan', 'dontAsk']);
    const refused = await session.executeCommand('permissions', 'bypassPermissions');
    expect(refused).toMatchObject({ success: false, message: expect.stringMatching(/^Permission mode bypassPermissions is not allowed here.*Modes: default, acceptEdits, plan, dontAsk\.$/) });
    expect(session.getSession().getPermissionMode()).not.toBe('bypassPermissions');
    const shown = await session.executeCommand('permissions');
    expect(shown!.message).toMatch(/Modes: default, acceptEdits, plan, dontAsk\.$/);
    expect((await session.executeCommand('permissions', 'acceptEdits'))!.success).toBe(true);
    expect(session.getSession().getPermissionMode()).toBe('acceptEdits');
  });

  it('/clear empties the conversation', async () => {
    await session.executeCommand('clear');
    expect(session.getMessages()).toEqual([]);
  });

  it('/doctor --check-provider makes one small model call and reports it', async () => {
    const result = await session.executeCommand('doctor', '--check-provider');
    expect(result!.message).toMatch(/Provider check: answered in \d+ ms\./);
  });

  it('/init writes AGENTS.md from the repository facts and asks before overwriting', async () => {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'demo', type: 'module', scripts: { test: 'vitest run' } }));
    const first = await session.executeCommand('init');
    expect(first!.message).toMatch(/^Wrote .*AGENTS\.md/);
    const text = await readFile(join(dir, 'AGENTS.md'), 'utf8');
    expect(text).toContain('Node.js project `demo` (ES modules).');
    expect(text).toContain('`npm run test`: vitest run');
    await writeFile(join(dir, 'AGENTS.md'), 'mine');
    const second = await session.executeCommand('init');
    expect(second!.interaction?.prompt).toMatchObject({ kind: 'choice' });
    expect((await second!.interaction!.submit('no')).message).toMatch(/left as it was/);
    expect(await readFile(join(dir, 'AGENTS.md'), 'utf8')).toBe('mine');
    await second!.interaction!.submit('yes');
    expect(await readFile(join(dir, 'AGENTS.md'), 'utf8')).toContain('## Facts');
  });

  it('the model reaches the model-invocable commands (compact, context, agent) and no others', async () => {
    const tools = session.listCommands().filter((command) => command.modelInvocable).map((command) => command.name);
    expect(tools.sort()).toEqual(['agent', 'compact', 'context', 'memory', 'skills']);
  });

  it('/plugin, /reload-plugins and /reset act on the whole host (scope host); nothing else does', () => {
    const host = session.listCommands().filter((command) => command.scope === 'host').map((command) => command.name);
    expect(host.sort()).toEqual(['plugin', 'reload-plugins', 'reset']);
  });

  it('/memory keeps its events in the session record and shows what was used', async () => {
    await session.executeCommand('memory', 'add project style Use two spaces');
    expect((await session.executeCommand('memory', 'add project style use two  spaces!'))!.message).toBe('Already in style.');
    expect(session.getSession().toRecord().memoryEvents).toEqual([expect.objectContaining({ type: 'add', topic: 'style' })]);
    expect((await session.executeCommand('memory', 'show style'))!.message).toContain('Use two spaces');
    expect((await session.executeCommand('memory', 'used'))!.message).toBe('topic style');
  });
});
