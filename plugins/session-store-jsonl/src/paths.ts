import { homedir } from 'node:os';
import { join } from 'node:path';

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

/** The session id embedded in a file name written by `sessionFileName`, if any. */
export function sessionIdFromFileName(name: string): string | undefined {
  const match = /_([A-Za-z0-9][A-Za-z0-9._-]*)\.jsonl$/.exec(name);
  return match?.[1];
}
