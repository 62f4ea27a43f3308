import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The repository `cwd` is in: the nearest folder (cwd included) holding `.git`; undefined outside one. */
export function repositoryRoot(cwd: string): string | undefined {
  for (let folder = cwd; ; folder = dirname(folder)) {
    if (exists(join(folder, '.git'))) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}

/**
 * The folder a project file or directory (`relative`, such as `.tessera/memory` or
 * `.agents/tasks`) belongs to for a session started in `cwd`, so that a session started in a
 * sub-folder of a repository finds the project's own: the nearest folder from `cwd` up to the
 * repository root where `relative` exists; else the repository root, where a new one goes
 * (`cwd` outside a repository). `exists` says whether it was found.
 */
export function projectFolderFor(cwd: string, relative: string): { root: string; exists: boolean } {
  const top = repositoryRoot(cwd);
  if (top === undefined) return { root: cwd, exists: exists(join(cwd, relative)) };
  for (let folder = cwd; ; folder = dirname(folder)) {
    if (exists(join(folder, relative))) return { root: folder, exists: true };
    if (folder === top || dirname(folder) === folder) return { root: top, exists: false };
  }
}
