import { repositoryRoot } from '@tessera/formats/project-folder';
import type { UserLocalRoot } from '@tessera/contracts';
import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserLocalStorageRootError } from './memory-errors.js';

/**
 * Validates a user-local storage root against the active repository: it must be non-empty,
 * absolute, not the repository and not inside it. Both paths are compared after resolving
 * symlinks (for a root that does not exist yet, its nearest existing parent is resolved), so a
 * link from `~/.tessera` into the repository is refused too.
 */
export async function resolveUserLocalRoot(root: string, cwd: string): Promise<UserLocalRoot> {
  if (typeof root !== 'string' || root.trim() === '') {
    throw new UserLocalStorageRootError('empty', String(root), undefined, 'The user-local storage root is empty.');
  }
  if (!isAbsolute(root)) {
    throw new UserLocalStorageRootError('relative', root, undefined, `The user-local storage root ${JSON.stringify(root)} is relative; it would land wherever the process happens to run.`);
  }
  const repositoryRoot = await realpathOrSelf(await findRepositoryRoot(resolve(cwd)));
  const resolvedRoot = await realpathOfNearest(resolve(root));
  if (resolvedRoot === repositoryRoot) {
    throw new UserLocalStorageRootError('repository-root', root, repositoryRoot, `The user-local storage root ${root} is the active repository ${repositoryRoot}.`);
  }
  if (isInside(resolvedRoot, repositoryRoot)) {
    const via = resolvedRoot === resolve(root) ? '' : ` (it resolves to ${resolvedRoot})`;
    throw new UserLocalStorageRootError('inside-repository', root, repositoryRoot, `The user-local storage root ${root}${via} is inside the active repository ${repositoryRoot}.`);
  }
  return { root: resolvedRoot, repositoryRoot };
}

/** The nearest folder at or above `start` that holds `.git` (a folder or a worktree file); `start` when none does. */
export async function findRepositoryRoot(start: string): Promise<string> {
  return repositoryRoot(start) ?? start;
}

function isInside(path: string, folder: string): boolean {
  const rest = relative(folder, path);
  return rest !== '' && !rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function realpathOrSelf(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}

/** The real path of `path`, or of its nearest existing parent with the missing rest appended. */
async function realpathOfNearest(path: string): Promise<string> {
  const missing: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    try {
      return join(await realpath(current), ...missing.reverse());
    } catch {
      if (dirname(current) === current) return path;
      missing.push(current.slice(dirname(current).length).replace(/^[/\\]/, ''));
    }
  }
}
