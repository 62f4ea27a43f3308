import type { HooksConfig } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { entriesFrom, HookRunner } from './hook-runner.js';

// In-process `callback` hooks (the Agent SDK's hook callbacks over the CLI's control protocol):
// their answer is read as a command hook's JSON output, under the handler's timeout.
function runner(callback: (input: Record<string, unknown>, signal: AbortSignal) => unknown, timeout?: number): HookRunner {
  const config: HooksConfig = { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'callback', id: 'hook_0', callback, ...(timeout === undefined ? {} : { timeout }) }] }] };
  return new HookRunner(entriesFrom(config, { file: 'test' }), {});
}

const call = { event: 'PreToolUse' as const, matchValue: 'Bash', fields: { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't1' } };

describe('callback hooks', () => {
  it('get the hook input and their JSON answer decides like a command hook would', async () => {
    const seen: Record<string, unknown>[] = [];
    const result = await runner((input) => {
      seen.push(input);
      return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no ls' }, systemMessage: 'checked' };
    }).run(call);
    expect(seen[0]).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } });
    expect(result).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'no ls', systemMessages: ['checked'] });
  });

  it('a callback that never answers times out (no say, a notice) and sees its signal aborted', async () => {
    let aborted = false;
    const result = await runner(
      (_input, signal) =>
        new Promise(() => {
          signal.addEventListener('abort', () => (aborted = true));
        }),
      0.05,
    ).run(call);
    expect(result.permissionDecision).toBeUndefined();
    expect(result.blocked).toBe(false);
    expect(result.notices.join('\n')).toMatch(/timed out/);
    expect(aborted).toBe(true);
  });

  it('a throwing callback is a failed hook with a notice, not a crash', async () => {
    const result = await runner(() => {
      throw new Error('host went away');
    }).run(call);
    expect(result.blocked).toBe(false);
    expect(result.notices.join('\n')).toMatch(/host went away/);
  });
});
