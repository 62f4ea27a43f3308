import type { ToolResult } from '@tessera/contracts';
import { fail } from './result.js';
import type { ToolSessionState } from './session-state.js';
import { hashBytes, type WorkspaceFileStat, type WorkspaceFiles } from './workspace-files.js';

/** The file tools, for messages that say which tool refused. */
export type FileToolName = 'Read' | 'Write' | 'Edit';

/**
 * FIFOs, sockets and devices are refused before anything opens them: reading a FIFO with no
 * writer blocks for ever (abort cannot interrupt it) and a device may never reach its end.
 */
export function refuseNonRegular(found: WorkspaceFileStat, shownPath: string, tool: FileToolName): ToolResult<never> | undefined {
  if (found.isFile || found.isDirectory) return undefined;
  return fail(
    `${shownPath} is not a regular file (it is a FIFO, socket or device); ${tool} only opens regular files, because opening one of these can block for ever. ` +
      'Use Bash if you really mean to read from or write to it.',
    'not_regular_file',
  );
}

/**
 * Write and Edit rename a new file over the old one, which the file system allows even when
 * the old file is read-only; so a read-only file is refused here instead of silently replaced.
 */
export async function checkWritable(
  files: WorkspaceFiles,
  path: string,
  shownPath: string,
  tool: FileToolName,
): Promise<ToolResult<never> | undefined> {
  if (await files.writable(path)) return undefined;
  return fail(
    `${shownPath} is read-only (no write permission), so ${tool} will not replace it. ` +
      'If changing it is intended, ask the user or make it writable first (e.g. chmod u+w), then retry.',
    'permission_denied',
  );
}

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
