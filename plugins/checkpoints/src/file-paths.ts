import { lstat, readlink, realpath, rmdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Symbolic links followed before giving up (the kernel's ELOOP limit is 40 too). */
const MAX_LINKS = 40;

const isMissing = (error: unknown): boolean => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/**
 * The real path a write to `path` lands on, even when the file (or a directory above it) does
 * not exist yet: the file tools write to the real path, so capture and restore must use it too.
 * A dangling symbolic link resolves to the file it would create.
 */
export async function realTarget(path: string, depth = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if (!isMissing(error) || depth >= MAX_LINKS) return path;
  }
  const link = await lstat(path).catch(() => undefined);
  if (link?.isSymbolicLink()) {
    const target = await readlink(path);
    return realTarget(isAbsolute(target) ? target : resolve(dirname(path), target), depth + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realTarget(parent, depth + 1), basename(path));
}

/** `stat` that answers `undefined` for a path that does not exist. */
export async function statIfPresent(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** The outermost missing directory on the way from the root down to `directory`, if any. */
export async function outermostMissing(directory: string): Promise<string | undefined> {
  let missing: string | undefined;
  let current = directory;
  for (;;) {
    if (await lstat(current).then(() => true, () => false)) return missing;
    missing = current;
    const parent = dirname(current);
    if (parent === current) return missing;
    current = parent;
  }
}

/** Removes the now-empty directories from `directory` up to and including `outermost`. */
export async function pruneEmptyDirectories(directory: string, outermost: string): Promise<void> {
  let current = directory;
  while (current === outermost || current.startsWith(`${outermost}${sep}`)) {
    try {
      await rmdir(current);
    } catch {
      return; // not empty (another file lives there) or already gone: stop climbing
    }
    if (current === outermost) return;
    current = dirname(current);
  }
}

/** `path` relative to `base` when it lies inside it, else `path` as it stands. */
export function displayPath(path: string, base: string): string {
  const inside = relative(base, path);
  const outside = inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside);
  return inside !== '' && !outside ? inside : path;
}
