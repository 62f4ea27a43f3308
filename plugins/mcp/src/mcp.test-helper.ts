import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServerDeclaration, McpServerSource, McpStdioServerSpec } from '@tessera/contracts';
import { McpClientPool, type McpClientPoolOptions } from './mcp-client-pool.js';

const require = createRequire(import.meta.url);

/** The bin file of an installed registry server (run with this Node, never through npx). */
function binOf(pkg: string, bin: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  return join(dirname(manifest), (require(manifest) as { bin: Record<string, string> }).bin[bin]!);
}

export const EVERYTHING_BIN = binOf('@modelcontextprotocol/server-everything', 'mcp-server-everything');
export const FILESYSTEM_BIN = binOf('@modelcontextprotocol/server-filesystem', 'mcp-server-filesystem');
export const FIXTURE_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'stdio-server.mjs');
export const CRASH_DURING_LISTING_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'crash-during-listing.mjs');

export function stdio(bin: string, args: string[] = [], env: Record<string, string> = {}): McpStdioServerSpec {
  return { type: 'stdio', command: process.execPath, args: [bin, ...args], env };
}

/** A source with a fixed list (scope `sdk` unless given). */
export function listSource(declarations: Array<Partial<McpServerDeclaration> & Pick<McpServerDeclaration, 'name' | 'spec'>>): McpServerSource {
  return { name: 'test', servers: () => declarations.map((declaration) => ({ scope: 'sdk', ...declaration })) };
}

export const session = (cwd = process.cwd(), sessionId = 's1') => ({ sessionId, cwd });

export interface LogEntry {
  severity: string;
  code: string;
  message: string;
}

export function testPool(options: Partial<McpClientPoolOptions> & Pick<McpClientPoolOptions, 'sources'>): { pool: McpClientPool; logs: LogEntry[] } {
  const logs: LogEntry[] = [];
  const pool = new McpClientPool({ oauth: false, log: (entry) => logs.push(entry), restart: { initialDelayMs: 50, maxDelayMs: 400, maxAttempts: 5 }, ...options });
  return { pool, logs };
}

/** Polls until `check` is true (or fails after `ms`). */
export async function until(check: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const toolContext = (signal: AbortSignal = new AbortController().signal) => ({ signal, cwd: process.cwd(), toolCallId: 't1', sessionId: 's1' });

/** Whether a process is still running. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The fixtures' process ids, from the `fixture started pid=` line each writes to stderr. */
export const fixturePids = (logs: LogEntry[]): number[] => logs.flatMap((entry) => /fixture started pid=(\d+)/.exec(entry.message)?.[1] ?? []).map(Number);

/** Kills what is still running (so a failing test leaves no process) and returns those pids. */
export function survivors(pids: number[]): number[] {
  const running = pids.filter(alive);
  for (const pid of running) process.kill(pid, 'SIGKILL');
  return running;
}
