import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext, ToolResult } from '@tessera/contracts';

/** A real temp directory (real path, so symlinked /tmp does not confuse containment). */
export async function tempDir(prefix = 'tessera-tools-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

let calls = 0;

export function toolContext(cwd: string, overrides: Partial<ToolContext> = {}): ToolContext {
  calls += 1;
  return { cwd, sessionId: 'session-1', toolCallId: `call-${calls}`, signal: new AbortController().signal, ...overrides };
}

export function text(result: ToolResult): string {
  return typeof result.output === 'string' ? result.output : result.output.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}
