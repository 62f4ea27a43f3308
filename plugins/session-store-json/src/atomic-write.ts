import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `data` so readers see either the old file or the complete new one: a unique temp
 * file beside the target, fsync, rename over the target, then fsync the directory so the
 * rename itself survives a crash (best effort where directories cannot be opened).
 */
export async function writeFileAtomic(file: string, data: string, mode = 0o600): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let handle;
  try {
    handle = await open(temp, 'wx', mode);
    await handle.writeFile(data, 'utf8');
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(file));
}

async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the file itself is already durable.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
