import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApprovalHandler,
  noSessionServices,
  PermissionPolicy,
  ReadAccess,
  SandboxPaths,
  ShellDirectories,
  WorkspaceGrants,
  type ApprovalRequest,
  type Message,
  type ToolExecutionEvent,
} from '@tessera/contracts';
import { createKernel, definePlugin, defineTool, toolsPlugin, type Kernel } from '@tessera/kernel';
import { AllowAllPermissionPolicy, recordingApprovals, RecordingApprovalHandler } from '@tessera/kernel/testing';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PermissionEnforcer } from './permission-enforcer.js';
import { permissionsPlugin, type PermissionsPluginOptions } from './permissions-plugin.js';
import { RulesPermissionPolicy } from './rules-permission-policy.js';

const ran: string[] = [];
const bashTool = defineTool({
  name: 'Bash',
  description: 'runs a command (fake)',
  inputSchema: z.object({ command: z.string() }),
  execute: ({ command }) => {
    ran.push(command);
    return { success: true, output: command === 'big' ? 'x'.repeat(50_000) : `ran ${command}` };
  },
});

let cwd: string;
let kernel: Kernel | undefined;
beforeEach(async () => {
  ran.length = 0;
  cwd = await realpath(await mkdtemp(join(tmpdir(), 'tessera-enforcer-')));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(cwd, { recursive: true, force: true });
});

const call = (command: string, id = `t_${command}`) => ({ toolCalls: [{ id, name: 'Bash', input: { command } }] });

async function start(commands: string[], options: PermissionsPluginOptions, extra: Parameters<typeof testPreset>[0] = {}) {
  const turns = [...commands.map((command, index) => call(command, `t${index}`)), { text: 'done' }];
  kernel = await createKernel({
    plugins: testPreset({ turns, replace: [permissionsPlugin(options)], plugins: [toolsPlugin(bashTool)], ...extra }),
  });
  const events: ToolExecutionEvent[] = [];
  const session = kernel.createSession({ cwd, onToolExecution: (event) => events.push(event) });
  return { session, events };
}

function toolResults(history: readonly Message[]): Array<{ content: unknown; isError: boolean | undefined }> {
  return history.flatMap((message) =>
    message.role === 'tool' ? message.content.map((block) => ({ content: block.content, isError: block.isError })) : [],
  );
}

describe('permissionsPlugin', () => {
  it('replaces the preset allow-all policy and denies by rule with a tool-end event', async () => {
    const { session, events } = await start(['rm -rf /', 'ls'], { rules: { deny: ['Bash(rm *)'], allow: ['Bash(ls *)'] } });
    await session.run('go');
    expect(kernel!.container.get(PermissionPolicy)).toBeInstanceOf(RulesPermissionPolicy);
    expect(ran).toEqual(['ls']);
    const results = toolResults(session.getHistory());
    expect(results[0]).toEqual({ content: expect.stringMatching(/^Permission denied: .*Bash\(rm \*\)/), isError: true });
    const ends = events.filter((event) => event.type === 'end');
    expect(ends[0]).toMatchObject({ denied: true, errorCode: 'denied', success: false });
    expect(ends[1]).toMatchObject({ success: true });
  });

  it('denies calls that need approval when no approver is configured', async () => {
    const { session } = await start(['npm test'], {});
    await session.run('go');
    expect(ran).toEqual([]);
    expect(String(toolResults(session.getHistory())[0]?.content)).toMatch(/no approval handler is configured/);
  });

  it('asks permissionHandler first, then the ApprovalHandler service, then promptForApproval', async () => {
    const asked: string[] = [];
    const { session } = await start(['npm test'], {
      permissionHandler: (toolName, input, request) => {
        asked.push(`handler:${toolName}:${request.suggestedRule}`);
        return true;
      },
      promptForApproval: () => {
        asked.push('prompt');
        return false;
      },
    });
    await session.run('go');
    expect(asked).toEqual(['handler:Bash:Bash(npm test)']);
    expect(ran).toEqual(['npm test']);
  });

  it('uses the bound ApprovalHandler when no permissionHandler option is given', async () => {
    const prompts: ApprovalRequest[] = [];
    const { session } = await start(['npm test'], { promptForApproval: (request) => (prompts.push(request), true) }, {
      plugins: [toolsPlugin(bashTool), recordingApprovals(false)],
    });
    await session.run('go');
    expect(prompts).toEqual([]);
    expect(ran).toEqual([]);
  });

  it('remembers "allow for session" as the exact rule, per session', async () => {
    let enforcer: PermissionEnforcer | undefined;
    const answers: string[] = [];
    const { session } = await start(['npm test', 'npm test', 'npm publish'], {
      onEnforcer: (value) => (enforcer = value),
      permissionHandler: (_tool, input) => {
        const command = (input as { command: string }).command;
        answers.push(command);
        return command === 'npm test' ? 'allow-session' : false;
      },
    });
    await session.run('go');
    expect(answers).toEqual(['npm test', 'npm publish']);
    expect(ran).toEqual(['npm test', 'npm test']);
    expect(enforcer!.getSessionAllowedRules(session)).toEqual(['Bash(npm test)']);
    const other = kernel!.createSession({ cwd });
    expect(enforcer!.getSessionAllowedRules(other)).toEqual([]);
    enforcer!.clearSessionAllowedRules(session);
    expect(enforcer!.getSessionAllowedRules(session)).toEqual([]);
  });

  it('stops waiting for approval when the run is aborted', async () => {
    let release: (() => void) | undefined;
    const waiting = new Promise<void>((resolve) => (release = resolve));
    const { session } = await start(['npm test'], {
      permissionHandler: () => {
        release!();
        return new Promise(() => {});
      },
    });
    const run = session.run('go');
    await waiting;
    session.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(ran).toEqual([]);
  });

  it('reads the permission mode from the session', async () => {
    const { session } = await start(['npm test'], {});
    session.setPermissionMode('bypassPermissions');
    await session.run('go');
    expect(ran).toEqual(['npm test']);
  });

  it('turns a failing handler into a denial instead of an error', async () => {
    const { session } = await start(['npm test'], {
      permissionHandler: () => {
        throw new Error('ui crashed');
      },
    });
    await session.run('go');
    expect(String(toolResults(session.getHistory())[0]?.content)).toMatch(/Permission denied: .*ui crashed/);
  });

  it('middle-truncates long tool output (default 30,000 characters)', async () => {
    const { session } = await start(['big'], { rules: { allow: ['Bash(big)'] } });
    await session.run('go');
    const content = String(toolResults(session.getHistory())[0]?.content);
    expect(content.length).toBeLessThan(30_200);
    expect(content).toMatch(/^x{15000}\n\n\[… 20000 characters truncated from the middle of this output …\]\n\nx{15000}$/);
  });

  it('takes a configurable truncation limit, or none', async () => {
    const { session } = await start(['big'], { rules: { allow: ['Bash(big)'] }, maxOutputChars: 100 });
    await session.run('go');
    expect(String(toolResults(session.getHistory())[0]?.content)).toMatch(/^x{50}\n\n\[… 49900 characters/);
    await kernel!.shutdown();
    const second = await start(['big'], { rules: { allow: ['Bash(big)'] }, maxOutputChars: false });
    await second.session.run('go');
    expect(String(toolResults(second.session.getHistory())[0]?.content)).toHaveLength(50_000);
  });

  it('resolves a Bash command\'s relative paths where an earlier cd left the shell (ShellDirectories)', async () => {
    const shells = new Map<string, string>();
    const shellTool = defineTool({
      name: 'Bash',
      description: 'runs a command and keeps a cd (fake)',
      inputSchema: z.object({ command: z.string() }),
      execute: ({ command }, { sessionId, cwd: start }) => {
        ran.push(command);
        if (command.startsWith('cd ')) shells.set(sessionId, join(shells.get(sessionId) ?? start, command.slice(3)));
        return { success: true, output: 'ok' };
      },
    });
    const shellPlugin = definePlugin({
      name: 'fake-shell-directories',
      provides: [ShellDirectories],
      register({ bind }) {
        bind(ShellDirectories).toConstantValue({ cwdFor: (sessionId) => shells.get(sessionId) });
      },
    });
    const rules = { allow: ['Bash(cd:*)', 'Bash(cat:*)'], deny: ['Read(./secrets/**)'] };
    const { session } = await start(['cd secrets', 'cat key.txt', 'cat ../README.md'], { rules }, { plugins: [toolsPlugin(shellTool), shellPlugin] });
    await session.run('go');
    expect(ran).toEqual(['cd secrets', 'cat ../README.md']);
    expect(String(toolResults(session.getHistory())[1]?.content)).toMatch(/Permission denied: .*Read\(\.\/secrets\/\*\*\)/);
  });

  it('leaves out of each model request the tools a deny rule denies outright', async () => {
    const webFetch = defineTool({ name: 'WebFetch', description: 'fetches (fake)', inputSchema: z.object({ url: z.string() }), execute: () => ({ success: true, output: '' }) });
    const write = defineTool({ name: 'Write', description: 'writes (fake)', inputSchema: z.object({ file_path: z.string() }), execute: () => ({ success: true, output: '' }) });
    const offered = async (deny: string[]) => {
      await kernel?.shutdown();
      const provider = new ScriptedProvider({ turns: [{ text: 'done' }] });
      kernel = await createKernel({
        plugins: testPreset({ provider, replace: [permissionsPlugin({ rules: { deny } })], plugins: [toolsPlugin(bashTool, webFetch, write)] }),
      });
      await kernel.createSession({ cwd }).run('go');
      nativeTools = provider.requests[0]!.nativeTools;
      return provider.requests[0]!.tools.map((tool) => tool.name);
    };
    let nativeTools: unknown;
    expect(await offered([])).toEqual(['Bash', 'WebFetch', 'Write']);
    // A session asks for hosted web search by default; the provider's own options decide.
    expect(nativeTools).toEqual({ webSearch: true });
    // Hosted web search is no tool in the list and never reaches preToolUse: it is switched off per request.
    await offered(['WebSearch']);
    expect(nativeTools).toEqual({ webSearch: false });
    await offered(['WebSearch(domain:x.com)']);
    expect(nativeTools).toEqual({ webSearch: true });
    expect(await offered(['WebFetch', 'Bash(rm *)', 'Write(./x)'])).toEqual(['Bash', 'Write']);
    expect(await offered(['Bash(*)', 'Edit'])).toEqual(['WebFetch']);
  });

  it('caps a tool that declares maxResultChars at its own figure, so a Read result keeps its middle', async () => {
    const readTool = defineTool({
      name: 'Read',
      description: 'reads (fake)',
      inputSchema: z.object({ file_path: z.string() }),
      maxResultChars: 100_000,
      execute: () => ({ success: true, output: 'x'.repeat(50_000) }),
    });
    const turns = [{ toolCalls: [{ id: 'r', name: 'Read', input: { file_path: join(cwd, 'a.txt') } }] }, { text: 'done' }];
    kernel = await createKernel({ plugins: testPreset({ turns, replace: [permissionsPlugin({})], plugins: [toolsPlugin(readTool)] }) });
    const session = kernel.createSession({ cwd });
    await session.run('go');
    expect(String(toolResults(session.getHistory())[0]?.content)).toHaveLength(50_000);
  });
});

describe('permissionsPlugin and the kernel seams', () => {
  const webFetch = defineTool({ name: 'WebFetch', description: 'fetches (fake)', inputSchema: z.object({ url: z.string() }), execute: () => ({ success: true, output: '' }) });
  const offered = (provider: ScriptedProvider, index: number) => provider.requests[index]!.tools.map((tool) => tool.name);

  it('follows a rebind of PermissionPolicy in sessions created afterwards; a session that already checked keeps its policy', async () => {
    const provider = new ScriptedProvider({ turns: [call('ls', 'a1'), { text: 'a' }, call('ls', 'b1'), { text: 'b' }, call('ls', 'a2'), { text: 'a again' }] });
    kernel = await createKernel({
      plugins: testPreset({ provider, replace: [permissionsPlugin({ rules: { deny: ['Bash(ls)', 'WebFetch'] } })], plugins: [toolsPlugin(bashTool, webFetch)] }),
    });
    const before = kernel.createSession({ cwd });
    await before.run('go');
    expect(ran).toEqual([]);
    expect(String(toolResults(before.getHistory())[0]?.content)).toMatch(/^Permission denied: .*Bash\(ls\)/);
    expect(offered(provider, 0)).toEqual(['Bash']);

    kernel.container.rebind(PermissionPolicy).toConstantValue(new AllowAllPermissionPolicy());
    const after = kernel.createSession({ cwd });
    await after.run('go');
    expect(ran).toEqual(['ls']);
    // The offered-tools tap asks the session's policy too: an allow-all policy leaves nothing out.
    expect(offered(provider, 2)).toEqual(['Bash', 'WebFetch']);

    await before.run('again');
    expect(ran).toEqual(['ls']);
    expect(offered(provider, 4)).toEqual(['Bash']);
  });

  it('asks the ApprovalHandler the session sees: a rebind reaches sessions created afterwards', async () => {
    const provider = new ScriptedProvider({ turns: [call('npm test', 'a1'), { text: 'a' }, call('npm test', 'b1'), { text: 'b' }, call('npm test', 'a2'), { text: 'a again' }] });
    kernel = await createKernel({
      plugins: testPreset({ provider, replace: [permissionsPlugin({ rules: { ask: ['Bash(npm *)'] } })], plugins: [toolsPlugin(bashTool), recordingApprovals(false)] }),
    });
    const refusing = kernel.get(ApprovalHandler) as RecordingApprovalHandler;
    const before = kernel.createSession({ cwd });
    await before.run('go');
    expect(ran).toEqual([]);

    const approving = new RecordingApprovalHandler(true);
    kernel.container.rebind(ApprovalHandler).toConstantValue(approving);
    const after = kernel.createSession({ cwd });
    await after.run('go');
    expect(ran).toEqual(['npm test']);
    await before.run('again');
    expect(ran).toEqual(['npm test']);
    expect(refusing.requests.map((request) => request.sessionId)).toEqual([before.sessionId, before.sessionId]);
    expect(approving.requests.map((request) => request.sessionId)).toEqual([after.sessionId]);
  });

  it('builds nothing in the factory: one plugin value composes into two kernels, each with its own policy and enforcer', async () => {
    const saved = process.env;
    let plugin: ReturnType<typeof permissionsPlugin>;
    const enforcers: PermissionEnforcer[] = [];
    try {
      process.env = {};
      expect(() => permissionsPlugin()).not.toThrow();
      plugin = permissionsPlugin({ rules: { deny: ['Bash(rm *)'], allow: ['Bash(ls)'] }, onEnforcer: (enforcer) => enforcers.push(enforcer) });
    } finally {
      process.env = saved;
    }
    expect(enforcers).toEqual([]);
    const boot = () => createKernel({ plugins: testPreset({ turns: [call('rm -rf x'), call('ls'), { text: 'done' }], replace: [plugin], plugins: [toolsPlugin(bashTool)] }) });
    const first = await boot();
    const second = await boot();
    try {
      expect(first.get(PermissionPolicy)).toBeInstanceOf(RulesPermissionPolicy);
      expect(first.get(PermissionPolicy)).not.toBe(second.get(PermissionPolicy));
      // One policy per kernel behind the three tokens, so setRules() changes all of them.
      expect(first.get(ReadAccess)).toBe(first.get(PermissionPolicy));
      expect(first.get(WorkspaceGrants)).toBe(first.get(PermissionPolicy));
      expect(enforcers).toHaveLength(2);
      expect(enforcers[0]).not.toBe(enforcers[1]);
      for (const k of [first, second]) {
        ran.length = 0;
        const session = k.createSession({ cwd });
        await session.run('go');
        expect(ran).toEqual(['ls']);
        expect(String(toolResults(session.getHistory())[0]?.content)).toMatch(/^Permission denied: .*Bash\(rm \*\)/);
      }
      (first.get(PermissionPolicy) as RulesPermissionPolicy).setRules({});
      expect((second.get(PermissionPolicy) as RulesPermissionPolicy).getRules()).toEqual({ deny: ['Bash(rm *)'], allow: ['Bash(ls)'] });
    } finally {
      await first.shutdown();
      await second.shutdown();
    }
  });

  it("uses the kernel's services for a session made outside the kernel (a subagent's child session)", async () => {
    let enforcer: PermissionEnforcer | undefined;
    kernel = await createKernel({
      plugins: testPreset({
        replace: [permissionsPlugin({ rules: { deny: ['Bash(rm *)'], ask: ['Bash(npm *)'] }, onEnforcer: (value) => (enforcer = value) })],
        plugins: [recordingApprovals(true)],
      }),
    });
    const outside = { sessionId: 'child', cwd, services: noSessionServices, getPermissionMode: () => 'default' as const, getHistory: () => [] };
    const check = (command: string) =>
      enforcer!.checkPermission({ session: outside, round: 1, toolCallId: 't', toolName: 'Bash', input: { command }, tool: undefined, signal: new AbortController().signal });
    expect(await check('rm -rf x')).toMatchObject({ decision: 'deny', reason: expect.stringContaining('Bash(rm *)') });
    expect(await check('npm test')).toBeUndefined();
    expect((kernel.get(ApprovalHandler) as RecordingApprovalHandler).requests.map((request) => request.sessionId)).toEqual(['child']);
  });

  it('rejects an unusable maxOutputChars when the plugin is made', () => {
    expect(() => permissionsPlugin({ maxOutputChars: 0 })).toThrow(/maxOutputChars must be a positive number or false/);
    expect(() => permissionsPlugin({ maxOutputChars: false })).not.toThrow();
  });

  it('declares what it provides and the tokens it uses when present', async () => {
    kernel = await createKernel({ plugins: testPreset({ replace: [permissionsPlugin()] }) });
    const described = kernel.describe().plugins.find((plugin) => plugin.name === 'permissions');
    expect(described).toMatchObject({
      provides: ['PermissionPolicy', 'ReadAccess', 'WorkspaceGrants'],
      requires: [],
      optional: ['ApprovalHandler', 'ShellDirectories', 'SandboxPaths'],
    });
    expect(described?.optional).toEqual([ApprovalHandler, ShellDirectories, SandboxPaths].map((token) => token.description!.replace('tessera/', '')));
  });
});

