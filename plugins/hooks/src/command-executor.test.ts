import { describe, expect, it } from 'vitest';
import { runCommandHook } from './command-executor.js';

const run = (command: string, timeoutMs: number, signal?: AbortSignal) =>
  runCommandHook({ type: 'command', command }, { cwd: '/tmp', env: {}, input: '{}', timeoutMs, ...(signal ? { signal } : {}) });

describe('runCommandHook', () => {
  it('settles at the timeout even when a grandchild left the process group and holds the pipes', async () => {
    const started = Date.now();
    const outcome = await Promise.race([run('setsid sleep 10 & echo started; sleep 10', 300), new Promise((resolve) => setTimeout(() => resolve('pending'), 5000))]);
    expect(outcome).toMatchObject({ timedOut: true });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('settles on an abort even when a grandchild left the process group', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const outcome = await Promise.race([run('setsid sleep 10 & sleep 10', 60_000, controller.signal), new Promise((resolve) => setTimeout(() => resolve('pending'), 5000))]);
    expect(outcome).toMatchObject({ aborted: true });
  });

  it('answers with the exit status as soon as the shell exits, while a background child still holds stdout', async () => {
    const started = Date.now();
    const outcome = await run(`(sleep 3 &) ; echo '{"decision":"block"}'; echo why >&2; exit 2`, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(outcome).toEqual({ exitCode: 2, stdout: '{"decision":"block"}\n', stderr: 'why\n' });
  });

  it('clamps a timeout a timer cannot hold instead of firing at once', async () => {
    const outcome = await run('sleep 0.2; echo ok', 3_000_000_000);
    expect(outcome).toEqual({ exitCode: 0, stdout: 'ok\n', stderr: '' });
  });
});
