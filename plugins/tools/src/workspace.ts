import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { isInsidePath, type WorkspaceGrants } from '@tessera/contracts';

export interface WorkspaceOptions {
  /**
   * Directories the file tools may use besides the session's `cwd` (Claude Code's
   * `additionalDirectories` / `--add-dir`). Relative entries resolve against the session cwd.
   */
  additionalDirectories?: readonly string[];
  /**
   * More directories granted elsewhere (the permission layer's `additionalDirectories`),
   * looked up on every check; the tool plugins pass the bound `WorkspaceGrants`.
   */
  grants?: WorkspaceGrants | (() => WorkspaceGrants | undefined);
}

export type PathResolution =
  | { ok: true; path: string }
  | { ok: false; code: 'outside_workspace' | 'invalid_path'; message: string };

// The native (libuv) realpath, which also canonicalises case on case-insensitive volumes. It runs
// synchronously: one realpath(3) on a local path takes microseconds, while handing it to the
// thread pool costs several times that on the main thread (measured under load in the server
// bench); the containment check runs on every file tool call.
export function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/** `path` is `root` or below it (see `isInsidePath`). */
export const isInside = isInsidePath;

/**
 * Real path of `lexical`, for paths that may not exist yet: the longest existing prefix is
 * resolved through the file system and the missing tail is appended. A dangling symbolic
 * link on the way is refused, because writing through it would create its target, wherever
 * that points.
 */
function realpathAllowingMissing(lexical: string): { path: string } | { error: string } {
  const tail: string[] = [];
  let current = lexical;
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return { path: tail.length === 0 ? real : join(real, ...tail.reverse()) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') return { error: `"${current}" is a symbolic link loop.` };
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { error: `"${current}" cannot be resolved (${code ?? 'error'}).` };
      let link: ReturnType<typeof lstatSync>;
      try {
        link = lstatSync(current, { throwIfNoEntry: false });
      } catch {
        link = undefined;
      }
      if (link?.isSymbolicLink()) {
        return { error: `"${current}" is a symbolic link whose target does not exist; refusing to follow it.` };
      }
      const parent = dirname(current);
      if (parent === current) return { path: lexical };
      tail.push(basename(current));
      current = parent;
    }
  }
}

/**
 * The session's workspace roots (its `cwd` plus configured additional directories) and the
 * containment check every host file tool runs before touching a path. Checks are made on real
 * paths, so `..`, symbolic links pointing out, absolute paths elsewhere and spellings that differ
 * only in case (on case-sensitive and case-insensitive file systems alike) all end up compared
 * against the real roots. The tools then operate on the resolved real path, never on the input.
 */
export class WorkspaceRoots {
  private readonly additional: readonly string[];
  private readonly grants: WorkspaceOptions['grants'];

  constructor(options: WorkspaceOptions = {}) {
    this.additional = options.additionalDirectories ?? [];
    this.grants = options.grants;
  }

  /** The configured roots as given (for messages), cwd first, then granted directories. */
  listed(cwd: string): string[] {
    const grants = typeof this.grants === 'function' ? this.grants() : this.grants;
    const granted = grants?.additionalDirectories(cwd) ?? [];
    return [...new Set([resolve(cwd), ...this.additional.map((dir) => resolve(cwd, dir)), ...granted.map((dir) => resolve(cwd, dir))])];
  }

  /** Real paths of the roots that exist. */
  async realRoots(cwd: string): Promise<string[]> {
    return this.realRootsNow(cwd);
  }

  private realRootsNow(cwd: string): string[] {
    const roots: string[] = [];
    for (const root of this.listed(cwd)) {
      const real = realpathOrUndefined(root);
      if (real !== undefined) roots.push(real);
    }
    return roots;
  }

  describe(cwd: string): string {
    return this.listed(cwd).join(', ');
  }

  /**
   * Resolves `input` (absolute, or relative to `cwd` unless `requireAbsolute`) to a real path
   * inside one of the roots, or explains why it cannot.
   */
  async resolve(input: string, cwd: string, options: { requireAbsolute?: boolean; field?: string } = {}): Promise<PathResolution> {
    const field = options.field ?? 'file_path';
    if (input.length === 0) return { ok: false, code: 'invalid_path', message: `${field} is empty; pass an absolute path.` };
    if (input.includes('\0')) return { ok: false, code: 'invalid_path', message: `${field} contains a NUL byte.` };
    if (options.requireAbsolute && !isAbsolute(input)) {
      return {
        ok: false,
        code: 'invalid_path',
        message: `${field} must be an absolute path, got "${input}". Did you mean "${resolve(cwd, input)}"?`,
      };
    }
    const lexical = resolve(cwd, input);
    const real = realpathAllowingMissing(lexical);
    if ('error' in real) return { ok: false, code: 'invalid_path', message: `Cannot use ${field} "${input}": ${real.error}` };
    const roots = this.realRootsNow(cwd);
    if (roots.some((root) => isInside(real.path, root))) return { ok: true, path: real.path };
    const shown = real.path === lexical ? `"${input}"` : `"${input}" (resolves to "${real.path}")`;
    return {
      ok: false,
      code: 'outside_workspace',
      message:
        `Path ${shown} is outside the workspace. Allowed roots: ${this.describe(cwd)}. ` +
        'Use a path inside one of them, or ask the user to add the directory to the workspace.',
    };
  }
}
