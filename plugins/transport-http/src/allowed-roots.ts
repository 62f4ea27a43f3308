import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isInsidePath } from '@tessera/contracts';
import { HubError } from './hub-error.js';

/** The folders a server's sessions may work in (symlinks resolved once, at start). */
export class AllowedRoots {
  private readonly roots: string[];
  /** The roots as configured and as resolved: a path is first checked against these by its text alone. */
  private readonly named: string[];

  constructor(allowedRoots: readonly string[]) {
    if (allowedRoots.length === 0) throw new Error('SessionHub needs at least one allowed root folder.');
    this.roots = allowedRoots.map((root) => {
      if (!isAbsolute(root)) throw new Error(`Allowed root ${root} must be an absolute path.`);
      return realpathSync.native(root);
    });
    this.named = [...new Set([...allowedRoots.map((root) => resolve(root)), ...this.roots])];
  }

  /**
   * A requested working directory (relative to the first root): inside a root (symlinks resolved), an existing folder.
   * A path outside every root by its text is refused before the file system is asked, so the
   * answer says nothing about what exists outside the roots.
   */
  checkCwd(requested: string | undefined, defaultCwd: string | undefined): string {
    const wanted = requested === undefined ? (defaultCwd ?? this.roots[0]!) : isAbsolute(requested) ? requested : resolve(this.roots[0]!, requested);
    if (!this.named.some((root) => isInsidePath(resolve(wanted), root))) throw new HubError('cwd_not_allowed', 403, `cwd ${wanted} is outside the server's allowed roots.`, 'cwd');
    let real: string;
    try {
      real = realpathSync.native(wanted);
      if (!statSync(real).isDirectory()) throw new Error('not a directory');
    } catch {
      throw new HubError('invalid_cwd', 400, `cwd ${wanted} is not an existing folder.`, 'cwd');
    }
    if (!this.contains(real)) throw new HubError('cwd_not_allowed', 403, `cwd ${wanted} is outside the server's allowed roots.`, 'cwd');
    return real;
  }

  /** True when `path` exists and, symlinks resolved, lies inside a root. */
  contains(path: string): boolean {
    let real: string;
    try {
      real = realpathSync.native(path);
    } catch {
      return false;
    }
    return this.roots.some((root) => isInsidePath(real, root));
  }
}
