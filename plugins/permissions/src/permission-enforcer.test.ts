import { describe, expect, it } from 'vitest';
import type { PreToolUseContext } from '@tessera/contracts';
import { PermissionEnforcer } from './permission-enforcer.js';
import { RulesPermissionPolicy } from './rules-permission-policy.js';

const session = { sessionId: 's', cwd: '/work', getPermissionMode: () => 'default' as const, getHistory: () => [] };

function context(command: string, approvedBy?: string): PreToolUseContext {
  return {
    session,
    round: 1,
    toolCallId: 't',
    toolName: 'Bash',
    input: { command },
    tool: undefined,
    signal: new AbortController().signal,
    ...(approvedBy === undefined ? {} : { approvedBy }),
  };
}

describe('PermissionEnforcer and calls approved before the guard', () => {
  const asked: string[] = [];
  const enforcer = new PermissionEnforcer({
    policy: new RulesPermissionPolicy({ deny: ['Bash(rm *)'], ask: ['Bash(npm *)'] }),
    permissionHandler: async (_tool, input) => (asked.push((input as { command: string }).command), false),
  });

  it('asks no one for an approved call, but still applies deny rules', async () => {
    expect(await enforcer.checkPermission(context('npm publish', 'PreToolUse hook'))).toBeUndefined();
    expect(await enforcer.checkPermission(context('rm -rf /', 'PreToolUse hook'))).toMatchObject({ decision: 'deny', source: 'permission' });
    expect(asked).toEqual([]);
  });

  it('asks as usual when nobody approved the call', async () => {
    expect(await enforcer.checkPermission(context('npm publish'))).toMatchObject({ decision: 'deny' });
    expect(asked).toEqual(['npm publish']);
  });
});
