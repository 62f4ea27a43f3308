import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackgroundProcessRequest } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from './bash-tool.js';
import { ToolSessionState } from './session-state.js';
import { tempDir, text, toolContext } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => cleanup());

/** Processes whose command line contains `marker` (the process table, via ps). */
function processesWith(marker: string): string[] {
  const table = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return table.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

async function waitUntil(check: () => boolean, attempts = 50): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

describe('Bash', () => {
  it('merges stdout and stderr in order and reports success', async () => {
    const tool = bashTool({ state: new ToolSessionState() });
    const result = await tool.execute({ command: 'echo one; echo two >&2; echo three' }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(text(result)).toBe('one\ntwo\nthree');
    expect(result.data).toMatchObject({ exitCode: 0, interrupted: false, stdout: 'one\ntwo\nthree\n', cwd: dir });
  });

  it('fails with the exit code on a non-zero exit', async () => {
    const tool = bashTool({ state: new ToolSessionState() });
    const result = await tool.execute({ command: 'echo bad >&2; exit 3' }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'exit_code', data: { exitCode: 3 } });
    expect(text(result)).toBe('bad\nExit code: 3');
  });

  it('says "(no output)" for a silent command', async () => {
    const result = await bashTool({ state: new ToolSessionState() }).execute({ command: 'true' }, toolContext(dir));
    expect(text(result)).toBe('(no output)');
  });

  it('carries a cd over to the next call of the same session, but not environment changes', async () => {
    await mkdir(join(dir, 'sub'));
    const state = new ToolSessionState();
    const tool = bashTool({ state });
    await tool.execute({ command: 'cd sub && export FOO=bar' }, toolContext(dir));
    const second = await tool.execute({ command: 'pwd; echo "foo=$FOO"' }, toolContext(dir));
    expect(text(second)).toBe(`${join(dir, 'sub')}\nfoo=`);
    const other = await tool.execute({ command: 'pwd' }, toolContext(dir, { sessionId: 'other' }));
    expect(text(other)).toBe(dir);
    state.release('session-1');
    expect(text(await tool.execute({ command: 'pwd' }, toolContext(dir)))).toBe(dir);
  });

  it('does not carry over a cd that leaves the workspace', async () => {
    const tool = bashTool({ state: new ToolSessionState() });
    const result = await tool.execute({ command: 'cd /' }, toolContext(dir));
    expect(text(result)).toContain(`Shell cwd was reset to ${dir}`);
    expect(text(await tool.execute({ command: 'pwd' }, toolContext(dir)))).toBe(dir);
  });

  it('keeps a cd into an additional directory', async () => {
    const extra = await tempDir();
    try {
      const tool = bashTool({ state: new ToolSessionState(), additionalDirectories: [extra.dir] });
      await tool.execute({ command: `cd ${extra.dir}` }, toolContext(dir));
      expect(text(await tool.execute({ command: 'pwd' }, toolContext(dir)))).toBe(extra.dir);
    } finally {
      await extra.cleanup();
    }
  });

  it('truncates long output in the middle with a marker', async () => {
    const tool = bashTool({ state: new ToolSessionState(), maxOutputChars: 100 });
    const result = await tool.execute({ command: 'for i in $(seq 1 200); do echo "line $i"; done' }, toolContext(dir));
    const output = text(result);
    expect(output).toMatch(/^line 1\n/);
    expect(output).toMatch(/line 200$/);
    expect(output).toMatch(/\[\.\.\. \d+ characters truncated \.\.\.\]/);
    expect(result.data?.truncated).toBe(true);
  });

  it('kills the whole process group on timeout, leaving nothing behind', async () => {
    const marker = `tessera-timeout-${process.pid}-${Date.now()}`;
    const tool = bashTool({ state: new ToolSessionState(), killGraceMs: 200 });
    const result = await tool.execute({ command: `(sleep 30; echo ${marker}) & sleep 31 # ${marker}`, timeout: 300 }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'timeout', data: { timedOut: true, interrupted: true } });
    expect(text(result)).toContain('timed out after 300 ms');
    expect(await waitUntil(() => processesWith(marker).length === 0, 200)).toBe(true);
  });

  it('kills the process group when the run is aborted', async () => {
    const marker = `tessera-abort-${process.pid}-${Date.now()}`;
    // Durations no other process on the machine uses, so `ps` finds only this test's sleeps.
    const unique = `${40 + (process.pid % 50)}.${Date.now() % 1000}`;
    const controller = new AbortController();
    const tool = bashTool({ state: new ToolSessionState(), killGraceMs: 200 });
    const running = tool.execute({ command: `sleep ${unique} & sleep ${unique}1; echo ${marker}` }, toolContext(dir, { signal: controller.signal }));
    expect(await waitUntil(() => processesWith(`sleep ${unique}`).length >= 1, 200)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ success: false, errorCode: 'aborted', data: { interrupted: true } });
    // A loaded machine (the whole suite in parallel) can take seconds to reap: wait up to 10 s.
    expect(await waitUntil(() => processesWith(marker).length === 0 && processesWith(`sleep ${unique}`).length === 0, 200)).toBe(true);
  });

  it('kills a SIGTERM-ignoring command with SIGKILL after the grace period', async () => {
    const tool = bashTool({ state: new ToolSessionState(), killGraceMs: 100 });
    const result = await tool.execute({ command: "trap '' TERM; sleep 5", timeout: 200 }, toolContext(dir));
    expect(result.errorCode).toBe('timeout');
  });

  it('kills background jobs a foreground command leaves running', async () => {
    const marker = `tessera-leftover-${process.pid}-${Date.now()}`;
    const tool = bashTool({ state: new ToolSessionState() });
    const result = await tool.execute({ command: `sh -c 'sleep 30 # ${marker}' & echo started` }, toolContext(dir));
    expect(text(result)).toBe('started');
    expect(await waitUntil(() => processesWith(marker).length === 0, 200)).toBe(true);
  });

  it('hands run_in_background to the background runtime and returns its id', async () => {
    const requests: BackgroundProcessRequest[] = [];
    const tool = bashTool({
      state: new ToolSessionState(),
      backgroundTasks: () => ({ spawn: async (request) => (requests.push(request), { id: 'bg-7', logPath: '/tmp/bg-7.log' }) }),
    });
    const result = await tool.execute({ command: 'npm run dev', description: 'dev server', run_in_background: true }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(text(result)).toContain('bg-7');
    expect(result.data?.backgroundTaskId).toBe('bg-7');
    expect(requests).toEqual([{ kind: 'process', command: 'npm run dev', cwd: dir, sessionId: 'session-1', description: 'dev server' }]);
  });

  it('fails clearly for run_in_background without a background runtime', async () => {
    const result = await bashTool({ state: new ToolSessionState() }).execute({ command: 'sleep 1', run_in_background: true }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'unavailable' });
    expect(text(result)).toContain('background plugin');
  });

  it('validates the timeout against the 600 s maximum', () => {
    const tool = bashTool();
    expect(tool.validate?.({ command: 'ls', timeout: 600_001 }).success).toBe(false);
    expect(tool.validate?.({ command: 'ls', timeout: 600_000 }).success).toBe(true);
    expect(tool.parameters).toMatchObject({ required: ['command'] });
  });
});
