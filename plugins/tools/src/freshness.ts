import type { ToolResult } from '@tessera/contracts';
import { fail } from './result.js';
import type { ToolSessionState } from './session-state.js';
import { hashBytes, type WorkspaceFileStat, type WorkspaceFiles } from './workspace-files.js';

export type FreshnessCheck = { ok: true; bytes: Buffer } | { ok: false; result: ToolResult<never> };

/**
 * Stale-edit protection: an existing file may be changed only when this session has Read it
 * and its content is still what was read. A matching mtime and size are taken as unchanged;
 * otherwise the content hash decides (so a `touch` alone does not force a re-read).
 */
export async function checkFresh(
  files: WorkspaceFiles,
  state: ToolSessionState,
  sessionId: string,
  path: string,
  shownPath: string,
  found: WorkspaceFileStat,
): Promise<FreshnessCheck> {
  const record = state.lastRead(sessionId, path);
  if (!record) {
    return {
      ok: false,
      result: fail(`File has not been read yet: ${shownPath}. Read it first before writing to it.`, 'not_read'),
    };
  }
  const bytes = await files.read(path);
  const sameStat = record.mtimeMs !== undefined && record.mtimeMs === found.mtimeMs && record.size === bytes.length;
  if (!sameStat && hashBytes(bytes) !== record.hash) {
    return {
      ok: false,
      result: fail(
        `File has been modified since it was read (by the user, a formatter or another process): ${shownPath}. Read it again before writing to it.`,
        'stale_read',
      ),
    };
  }
  return { ok: true, bytes };
}

/** After our own write, the new content counts as read: the model knows what it wrote. */
export async function recordWrite(
  files: WorkspaceFiles,
  state: ToolSessionState,
  sessionId: string,
  path: string,
  content: string,
): Promise<void> {
  const bytes = Buffer.from(content, 'utf8');
  const found = await files.stat(path);
  state.recordRead(sessionId, path, { mtimeMs: found?.mtimeMs, size: bytes.length, hash: hashBytes(bytes) });
}
