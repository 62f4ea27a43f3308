import { stat } from 'node:fs/promises';
import { isInside, WorkspaceRoots, type WorkspaceOptions } from './workspace.js';

export type SearchRoot =
  | { ok: true; path: string; workspaceRoot: string | undefined; roots: string[] }
  | { ok: false; code: 'outside_workspace' | 'invalid_path' | 'not_found'; message: string };

/**
 * The directory (or file) Glob and Grep search: `path` resolved against the session cwd
 * (relative paths allowed, as in Claude Code), contained in the workspace, and existing.
 * `roots` are the real paths of all the workspace roots, for checks on what the search reaches.
 */
export async function resolveSearchRoot(path: string | undefined, cwd: string, options: WorkspaceOptions): Promise<SearchRoot> {
  const roots = new WorkspaceRoots(options);
  const resolved = await roots.resolve(path ?? cwd, cwd, { field: 'path' });
  if (!resolved.ok) return resolved;
  const real = await roots.realRoots(cwd);
  const exists = await stat(resolved.path).then(() => true, () => false);
  if (!exists) return { ok: false, code: 'not_found', message: `Path does not exist: ${path ?? cwd}.` };
  const workspaceRoot = real.filter((root) => isInside(resolved.path, root)).sort((a, b) => b.length - a.length)[0];
  return { ok: true, path: resolved.path, workspaceRoot, roots: real };
}
