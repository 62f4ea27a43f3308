import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import type { ToolContext } from '@tessera/contracts';
import type { ISandboxClient } from './sandbox/sandbox-client.js';
import { WorkspaceRoots, type PathResolution } from './workspace.js';

export interface WorkspaceFileStat {
  size: number;
  isDirectory: boolean;
  mtimeMs: number | undefined;
}

/**
 * Where Read, Write and Edit do their file work: the host file system (with workspace
 * containment) or a sandbox client. The tools hold no file-system code of their own.
 */
export interface WorkspaceFiles {
  resolve(input: string, context: ToolContext): Promise<PathResolution>;
  stat(path: string): Promise<WorkspaceFileStat | undefined>;
  read(path: string): Promise<Buffer>;
  /** Atomic where the backend allows it; creates parent directories. */
  write(path: string, content: string): Promise<void>;
}

export function hashBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Writes through a temporary file in the same directory and renames it into place, so a
 * reader never sees half a file and a crash leaves the old content. Keeps the old mode.
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const mode = await stat(path).then((found) => found.mode & 0o7777, () => undefined);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode ?? 0o666);
    try {
      await handle.writeFile(content);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    // `open` applies the umask; chmod restores the exact old mode.
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export class HostWorkspaceFiles implements WorkspaceFiles {
  constructor(private readonly roots: WorkspaceRoots) {}

  resolve(input: string, context: ToolContext): Promise<PathResolution> {
    return this.roots.resolve(input, context.cwd, { requireAbsolute: true });
  }

  async stat(path: string): Promise<WorkspaceFileStat | undefined> {
    try {
      const found = await stat(path);
      return { size: found.size, isDirectory: found.isDirectory(), mtimeMs: found.mtimeMs };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  read(path: string): Promise<Buffer> {
    return readFile(path);
  }

  write(path: string, content: string): Promise<void> {
    return writeFileAtomic(path, content);
  }
}

/** Paths must be absolute and stay under `root` after POSIX normalisation. */
export function resolveSandboxPath(input: string, root: string, field = 'file_path'): PathResolution {
  if (input.length === 0 || input.includes('\0')) {
    return { ok: false, code: 'invalid_path', message: `${field} must be a non-empty absolute path inside the sandbox.` };
  }
  if (!posix.isAbsolute(input)) {
    return { ok: false, code: 'invalid_path', message: `${field} must be an absolute path inside the sandbox, got "${input}".` };
  }
  const normalized = posix.normalize(input);
  const base = posix.normalize(root);
  if (normalized === base || normalized.startsWith(base.endsWith('/') ? base : `${base}/`)) return { ok: true, path: normalized };
  return {
    ok: false,
    code: 'outside_workspace',
    message: `Path "${input}" is outside the sandbox workspace. Allowed root: ${base}.`,
  };
}

export class SandboxWorkspaceFiles implements WorkspaceFiles {
  constructor(
    private readonly client: ISandboxClient,
    private readonly root: string,
  ) {}

  async resolve(input: string): Promise<PathResolution> {
    return resolveSandboxPath(input, this.root);
  }

  async stat(path: string): Promise<WorkspaceFileStat | undefined> {
    const found = await this.client.stat(path);
    return found ? { size: found.size, isDirectory: found.isDirectory, mtimeMs: found.mtimeMs } : undefined;
  }

  async read(path: string): Promise<Buffer> {
    return Buffer.from(await this.client.readFile(path));
  }

  write(path: string, content: string): Promise<void> {
    return this.client.writeFile(path, content);
  }
}
