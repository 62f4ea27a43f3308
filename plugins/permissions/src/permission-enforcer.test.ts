import { describe, expect, it } from 'vitest';
import { ApprovalHandler, noSessionServices, PermissionPolicy, type PostToolUseContext, type PreToolUseContext, type SessionServices } from '@tessera/contracts';
import { PermissionEnforcer } from './permission-enforcer.js';
import { RulesPermissionPolicy } from './rules-permission-policy.js';

const session = { sessionId: 's', cwd: '/work', services: noSessionServices, getPermissionMode: () => 'default' as const, getHistory: () => [] };

function context(command: string, approvedBy?: string): PreToolUseContext {
  return call('Bash', { command }, approvedBy);
}

function call(toolName: string, input: unknown, approvedBy?: string): PreToolUseContext {
  return {
    session,
    round: 1,
    toolCallId: 't',
    toolName,
    input,
    tool: undefined,
    signal: new AbortController().signal,
    ...(approvedBy === undefined ? {} : { approvedBy }),
  };
}

describe('PermissionEnforcer and calls approved before the guard', () => {
  const asked: string[] = [];
  const enforcer = new PermissionEnforcer({
    policy: new RulesPermissionPolicy({ deny: ['Bash(rm *)'], ask: ['Bash(npm *)'] }),
    permissionHandler: async (_tool, input) => (asked.push((input as { command?: string; file_path?: string }).command ?? (input as { file_path: string }).file_path), false),
  });

  it('spares the prompt the mode would show for an approved call, but still applies deny rules', async () => {
    asked.length = 0;
    expect(await enforcer.checkPermission(context('make build', 'PreToolUse hook'))).toBeUndefined();
    expect(await enforcer.checkPermission(call('Edit', { file_path: '/work/src/a.ts' }, 'PreToolUse hook'))).toBeUndefined();
    expect(await enforcer.checkPermission(context('rm -rf /', 'PreToolUse hook'))).toMatchObject({ decision: 'deny', source: 'permission' });
    expect(asked).toEqual([]);
  });

  it('still asks for an approved call an ask rule matches (a hook allow never overrides ask rules)', async () => {
    asked.length = 0;
    expect(await enforcer.checkPermission(context('npm publish', 'PreToolUse hook'))).toMatchObject({ decision: 'deny' });
    expect(asked).toEqual(['npm publish']);
  });

  it('still asks for an approved edit of a protected path, even when an allow rule covers it', async () => {
    asked.length = 0;
    expect(await enforcer.checkPermission(call('Edit', { file_path: '/work/.claude/settings.json' }, 'PreToolUse hook'))).toMatchObject({ decision: 'deny' });
    const allowing = new PermissionEnforcer({
      policy: new RulesPermissionPolicy({ allow: ['Edit'] }),
      permissionHandler: async (_tool, input) => (asked.push((input as { file_path: string }).file_path), false),
    });
    expect(await allowing.checkPermission(call('Edit', { file_path: '/work/.git/config' }, 'PreToolUse hook'))).toMatchObject({ decision: 'deny' });
    expect(asked).toEqual(['/work/.claude/settings.json', '/work/.git/config']);
  });

  it('asks as usual when nobody approved the call', async () => {
    asked.length = 0;
    expect(await enforcer.checkPermission(context('npm publish'))).toMatchObject({ decision: 'deny' });
    expect(asked).toEqual(['npm publish']);
  });
});

describe('PermissionEnforcer and a cd carried over by Bash', () => {
  const rules = { allow: ['Bash(cd:*)', 'Bash(cat:*)'], deny: ['Read(./secrets/**)'] };
  const shellAt = (directory: string | undefined) => () => ({ cwdFor: (sessionId: string) => (sessionId === 's' ? directory : undefined) });
  const call = (toolName: string, input: unknown): PreToolUseContext => ({ ...context(''), toolName, input });

  it('resolves relative paths of a command in the shell directory, with rules still anchored at the session cwd', async () => {
    const enforcer = new PermissionEnforcer({ policy: new RulesPermissionPolicy(rules), shellDirectories: shellAt('/work/secrets') });
    expect(await enforcer.checkPermission(context('cat key.txt'))).toMatchObject({ decision: 'deny', reason: expect.stringContaining('Read(./secrets/**)') });
    expect(await enforcer.checkPermission(context('cat ../README.md'))).toBeUndefined();
  });

  it('uses the session cwd before any cd, and when nothing binds ShellDirectories', async () => {
    for (const shellDirectories of [shellAt(undefined), () => undefined]) {
      const enforcer = new PermissionEnforcer({ policy: new RulesPermissionPolicy(rules), shellDirectories });
      expect(await enforcer.checkPermission(context('cat key.txt'))).toBeUndefined();
      expect(await enforcer.checkPermission(context('cat secrets/key.txt'))).toMatchObject({ decision: 'deny' });
    }
  });

  it('leaves other tools resolving against the session cwd', async () => {
    const enforcer = new PermissionEnforcer({ policy: new RulesPermissionPolicy(rules), shellDirectories: shellAt('/work/secrets') });
    expect(await enforcer.checkPermission(call('Read', { file_path: 'key.txt' }))).toBeUndefined();
    expect(await enforcer.checkPermission(call('Read', { file_path: 'secrets/key.txt' }))).toMatchObject({ decision: 'deny' });
  });
});

describe('PermissionEnforcer output truncation', () => {
  const post = (tool: PostToolUseContext['tool'], text: string): PostToolUseContext => ({
    session,
    round: 1,
    toolCallId: 't',
    toolName: 'Read',
    ...(tool ? { tool } : {}),
    input: {},
    result: { success: true, output: text },
    durationMs: 1,
  });
  const readTool = { name: 'Read', description: 'reads', parameters: {}, maxResultChars: 100_000, execute: () => ({ success: true, output: '' }) };

  it("caps a tool that declares maxResultChars at its own figure, not the default", () => {
    const enforcer = new PermissionEnforcer({ policy: new RulesPermissionPolicy() });
    expect(enforcer.truncate(post(readTool, 'x'.repeat(50_000)))).toBeUndefined();
    expect(String(enforcer.truncate(post(readTool, 'x'.repeat(100_010)))?.result?.output)).toMatch(/10 characters truncated/);
    expect(String(enforcer.truncate(post(undefined, 'x'.repeat(50_000)))?.result?.output)).toMatch(/20000 characters truncated/);
    const small = new PermissionEnforcer({ policy: new RulesPermissionPolicy(), maxOutputChars: 100 });
    expect(small.truncate(post({ ...readTool, maxResultChars: 1_000 }, 'x'.repeat(500)))).toBeUndefined();
    const off = new PermissionEnforcer({ policy: new RulesPermissionPolicy(), maxOutputChars: false });
    expect(off.truncate(post(readTool, 'x'.repeat(200_000)))).toBeUndefined();
  });
});

describe('PermissionEnforcer and the session services', () => {
  it('checks against the session PermissionPolicy and asks its ApprovalHandler when given neither', async () => {
    const asked: string[] = [];
    const bound = new Map<symbol, unknown>([
      [PermissionPolicy, new RulesPermissionPolicy({ deny: ['Bash(rm *)'], ask: ['Bash(npm *)'] })],
      [ApprovalHandler, { requestApproval: async (request: { sessionId: string }) => (asked.push(request.sessionId), true) }],
    ]);
    const services = { get: (token: symbol) => bound.get(token), getOptional: (token: symbol) => bound.get(token), getAll: () => [] } as unknown as SessionServices;
    const enforcer = new PermissionEnforcer();
    const inSession = (command: string): PreToolUseContext => ({ ...context(command), session: { ...session, services } });
    expect(await enforcer.checkPermission(inSession('rm -rf /'))).toMatchObject({ decision: 'deny', reason: expect.stringContaining('Bash(rm *)') });
    expect(await enforcer.checkPermission(inSession('npm test'))).toBeUndefined();
    expect(asked).toEqual(['s']);
  });

  it('denies, with the reason, when no policy is given and the session has none', async () => {
    expect(await new PermissionEnforcer().checkPermission(context('ls'))).toMatchObject({
      decision: 'deny',
      reason: expect.stringMatching(/could not be checked: No .*PermissionPolicy is bound/),
    });
  });
});

