import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ISession } from '@tessera/contracts';
import { defaultAgentDir, sessionDirFor } from '@tessera/plugin-session-store-jsonl';

/**
 * The JSONL file `jsonlSessionStore` keeps a session in, sent to hooks as `transcript_path`
 * (Claude Code hooks read it: ralph-loop's Stop hook ends the loop when the file is missing).
 * The file name starts with the session's creation time, so it is looked up by id; `''` until
 * the store has written the file (it does once the session has a reply).
 */
export function sessionTranscriptPath(agentDir: string | undefined, session: ISession | undefined): string {
  if (session === undefined) return '';
  const dir = sessionDirFor(session.cwd, agentDir ?? defaultAgentDir());
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return '';
  }
  const name = names.find((entry) => entry.endsWith(`_${session.sessionId}.jsonl`));
  return name === undefined ? '' : join(dir, name);
}
