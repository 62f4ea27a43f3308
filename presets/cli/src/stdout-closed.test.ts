import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// `tessera acp` and `tessera mcp serve` as real processes (the built bin): when the client
// stops reading their stdout, they end on the next write, quietly (no EPIPE stack), exit 1,
// as print mode does, even though stdin stays open.

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'tessera-stdout-closed-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** Starts the subcommand, reads its answer to `request`, closes stdout, then sends `request` again. */
async function closeStdoutMidSession(argv: string[], request: Record<string, unknown>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; ms: number }> {
  const child = spawn(process.execPath, [BIN, ...argv, '--provider', 'demo'], { cwd: home, env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0' } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stdin.write(`${JSON.stringify({ ...request, id: 1 })}\n`);
  await new Promise((resolve) => child.stdout.once('data', resolve));
  // The client goes away from our output, and keeps our input open.
  child.stdout.destroy();
  const closedAt = Date.now();
  for (let id = 2; id <= 4; id += 1) child.stdin.write(`${JSON.stringify({ ...request, id })}\n`);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const { code, signal } = await exited;
  clearTimeout(timer);
  return { code, signal, stderr, ms: Date.now() - closedAt };
}

describe('the client closes stdout mid-session', () => {
  it('tessera acp ends promptly, quietly, exit 1', async () => {
    const run = await closeStdoutMidSession(['acp'], { jsonrpc: '2.0', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } });
    expect(run.signal, run.stderr).toBeNull();
    expect(run.code).toBe(1);
    expect(run.ms).toBeLessThan(5_000);
    expect(run.stderr).not.toMatch(/EPIPE|Error:|\n\s+at /);
  }, 20_000);

  it('tessera mcp serve ends promptly, quietly, exit 1', async () => {
    const run = await closeStdoutMidSession(['mcp', 'serve'], { jsonrpc: '2.0', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
    expect(run.signal, run.stderr).toBeNull();
    expect(run.code).toBe(1);
    expect(run.ms).toBeLessThan(5_000);
    expect(run.stderr).not.toMatch(/EPIPE|Error:|\n\s+at /);
  }, 20_000);
});
