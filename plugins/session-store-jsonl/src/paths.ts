import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { isValidSessionId } from '@tessera/contracts';

/** `~/.tessera/agent`: the root of sessions, blobs and terminal breadcrumbs. */
export function defaultAgentDir(): string {
  return join(homedir(), '.tessera', 'agent');
}

/** `<cwd>` without its leading slash, with `/`, `\` and `:` replaced by `-`. */
export function encodeCwd(cwd: string): string {
  return cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-');
}

/** The sessions directory of one project: `<agentDir>/sessions/--<cwd-encoded>--`. */
export function sessionDirFor(cwd: string, agentDir: string = defaultAgentDir()): string {
  return join(agentDir, 'sessions', `--${encodeCwd(cwd)}--`);
}

/** `<ISO time with : and . replaced by ->_<sessionId>.jsonl`. */
export function sessionFileName(sessionId: string, time: Date = new Date()): string {
  return `${time.toISOString().replace(/[:.]/g, '-')}_${sessionId}.jsonl`;
}

/**
 * `<ISO time>_<id>.jsonl` as `sessionFileName` writes it. The time prefix has a fixed shape
 * (`2025-01-02T03-04-05-678Z`, six-digit signed years included) and no `_`, so everything
 * between its `_` and `.jsonl` is the id, underscores and all.
 */
const SESSION_FILE_NAME = /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z_(.+)\.jsonl$/;

/**
 * The session id of a file name (or path) written by `sessionFileName`; undefined for any
 * other name. The whole id is returned, never a suffix of it: `…Z_x_abc.jsonl` is session
 * `x_abc`, not `abc`.
 */
export function sessionIdFromFileName(name: string): string | undefined {
  const id = SESSION_FILE_NAME.exec(basename(name))?.[1];
  return isValidSessionId(id) ? id : undefined;
}
