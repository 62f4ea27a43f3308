import { randomBytes } from 'node:crypto';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Content-addressed, so a payload already on disk is simply replaced by identical bytes. */
export async function writePayload(dir: string, sha256: string, json: string): Promise<void> {
  const target = join(dir, `${sha256}.json`);
  const temp = join(dir, `.${sha256}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, json, { mode: 0o600 });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

/** One `open` + `writev` + `close` for a whole batch. */
export async function appendChunks(path: string, chunks: Buffer[]): Promise<void> {
  const handle = await open(path, 'a', 0o600);
  try {
    await handle.writev(chunks);
  } finally {
    await handle.close();
  }
}

/** An operation started ahead of being awaited: its failure is observed later, by whoever awaits it. */
export function started(operation: Promise<unknown>): Promise<void> {
  const done = operation.then(() => undefined);
  done.catch(() => undefined);
  return done;
}
