import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HooksConfig } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesFrom, HookRunner, hookTimeoutMs } from './hook-runner.js';

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-hook-runner-')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const preToolUse = (toolName = 'Bash') => ({ event: 'PreToolUse' as const, matchValue: toolName, fields: { tool_name: toolName, tool_input: { command: 'ls' }, tool_use_id: 't1' } });
const runner = (config: HooksConfig) => new HookRunner(entriesFrom(config, { file: 'settings.json' }));

describe('HookRunner', () => {
  it('runs the same ${CLAUDE_PLUGIN_ROOT} command once per plugin, and an identical plain command once', async () => {
    for (const name of ['a', 'b']) {
      await mkdir(join(dir, name, 'hooks'), { recursive: true });
      await writeFile(join(dir, name, 'hooks', 'guard.sh'), `#!/bin/sh\necho ${name} >> "${dir}/ran"\n`);
      await chmod(join(dir, name, 'hooks', 'guard.sh'), 0o755);
    }
    const config: HooksConfig = {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"' }, { type: 'command', command: `echo plain >> "${dir}/ran"` }] }],
    };
    const both = new HookRunner([
      ...entriesFrom(config, { file: 'a/hooks/hooks.json', pluginRoot: join(dir, 'a') }),
      ...entriesFrom(config, { file: 'b/hooks/hooks.json', pluginRoot: join(dir, 'b') }),
    ]);
    await both.run(preToolUse());
    expect((await readFile(join(dir, 'ran'), 'utf8')).trim().split('\n').sort()).toEqual(['a', 'b', 'plain']);
  });

  it('honours an exit-2 block even when a background child keeps stdout open past the timeout', async () => {
    const result = await runner({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '(sleep 4 &) ; echo "no ls" >&2; exit 2', timeout: 1 }] }] }).run(preToolUse());
    expect(result.notices).toEqual([]);
    expect(result).toMatchObject({ blocked: true, reason: 'no ls', permissionDecision: 'deny' });
  });

  it('does not kill a hook at once when its timeout is too large for a timer (the guard would fail open)', async () => {
    const result = await runner({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'sleep 0.2; echo "no" >&2; exit 2', timeout: 3_000_000 }] }] }).run(preToolUse());
    expect(result.blocked).toBe(true);
  });

  it('applies the JSON a hook printed before exiting with a code other than 0 or 2, with a notice', async () => {
    const deny = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here"}}'; exit 1`;
    const result = await runner({ PreToolUse: [{ hooks: [{ type: 'command', command: deny }] }] }).run(preToolUse());
    expect(result).toMatchObject({ blocked: true, permissionDecision: 'deny', reason: 'not here' });
    expect(result.notices[0]).toMatch(/failed with exit code 1/);
  });
});

describe('matching', () => {
  it('filters StopFailure hooks on the failure reason', () => {
    const stopFailure = runner({ StopFailure: [{ matcher: 'rate_limit', hooks: [{ type: 'command', command: 'exit 0' }] }] });
    expect(stopFailure.matching({ event: 'StopFailure', matchValue: 'authentication_failed' })).toHaveLength(0);
    expect(stopFailure.matching({ event: 'StopFailure', matchValue: 'rate_limit' })).toHaveLength(1);
  });

  it('treats Task and Agent as one tool name in matchers, as in `if` rules', () => {
    const task = runner({ PreToolUse: [{ matcher: 'Task', hooks: [{ type: 'command', command: 'exit 0' }] }] });
    const agent = runner({ PreToolUse: [{ matcher: '^Agent$', hooks: [{ type: 'command', command: 'exit 0' }] }] });
    expect(task.matching(preToolUse('Agent'))).toHaveLength(1);
    expect(agent.matching(preToolUse('Task'))).toHaveLength(1);
    expect(task.matching(preToolUse('Bash'))).toHaveLength(0);
  });
});

describe('hookTimeoutMs', () => {
  it("uses Claude Code's per-event budgets: SessionEnd 1.5 s up to 60 s, UserPromptSubmit 30 s, else the type's default", () => {
    expect(hookTimeoutMs('SessionEnd', { type: 'command', command: 'x' })).toBe(1500);
    expect(hookTimeoutMs('SessionEnd', { type: 'command', command: 'x', timeout: 10 })).toBe(10_000);
    expect(hookTimeoutMs('SessionEnd', { type: 'command', command: 'x', timeout: 600 })).toBe(60_000);
    expect(hookTimeoutMs('UserPromptSubmit', { type: 'command', command: 'x' })).toBe(30_000);
    expect(hookTimeoutMs('UserPromptSubmit', { type: 'command', command: 'x', timeout: 90 })).toBe(90_000);
    expect(hookTimeoutMs('PreToolUse', { type: 'command', command: 'x' })).toBe(600_000);
    expect(hookTimeoutMs('PreToolUse', { type: 'command', command: 'x', timeout: 99_999_999 })).toBe(2_147_483_647);
  });
});
