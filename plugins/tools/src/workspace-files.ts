import { createHash, randomBytes } from 'node:crypto';
import { constants, readFileSync, statSync } from 'node:fs';
import { access, chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import type { ToolContext } from '@tessera/contracts';
import type { ISandboxClient, ISandboxFileStat } from './sandbox/sandbox-client.js';
import { WorkspaceRoots, type PathResolution } from './workspace.js';

export interface WorkspaceFileStat {
  size: number;
  isDirectory: boolean;
  /**
   * A regular file. False for directories and for FIFOs, sockets and devices: opening those
   * can block for ever (a FIFO with no writer) or never reach end of file (`/dev/zero`).
   */
  isFile: boolean;
  mtimeMs: number | undefined;
}

/**
 * Where Read, Write and Edit do their file work: the host file system (with workspace
 * containment) or a sandbox client. The tools hold no file-system code of their own.
 */
export interface WorkspaceFiles {
  resolve(input: string, context: ToolContext): Promise<PathResolution>;
  stat(path: string): Promise<WorkspaceFileStat | undefined>;
  /** `sizeHint`: the size a `stat` just reported, when the caller has it (small files may be read at once). */
  read(path: string, sizeHint?: number): Promise<Buffer>;
  /** Atomic where the backend allows it; creates parent directories. */
  write(path: string, content: string): Promise<void>;
  /**
   * Whether an existing file may be replaced. An atomic write renames over the file, so it
   * would succeed on a read-only file; the tools ask first instead.
   */
  writable(path: string): Promise<boolean>;
}

export function hashBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** How a file's bytes were decoded; `unknown` means not valid UTF-8 and no UTF-16 BOM. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'unknown';

export interface DecodedText {
  /** For `unknown`, invalid bytes appear as U+FFFD: fit to show, not to write back. */
  text: string;
  encoding: TextEncoding;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The UTF-16 byte order a file's BOM announces, if it starts with one. */
export function utf16ByteOrder(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  if (bytes.length < 2) return undefined;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/**
 * UTF-16 after its two-byte BOM. Big-endian is byte-swapped and decoded as little-endian,
 * which Node does without full ICU; an odd trailing byte shows as U+FFFD.
 */
function decodeUtf16(bytes: Uint8Array, bigEndian: boolean): string {
  const body = Buffer.from(bytes.subarray(2, 2 + ((bytes.length - 2) & ~1)));
  if (bigEndian) body.swap16();
  return body.toString('utf16le') + ((bytes.length - 2) % 2 === 1 ? '\uFFFD' : '');
}

/**
 * Decodes file bytes for the text tools: UTF-16 when the file starts with its BOM (the BOM
 * is dropped), otherwise UTF-8. A UTF-8 BOM stays in the text as U+FEFF, so writing the text
 * back as UTF-8 keeps it. Bytes that are not valid UTF-8 give `unknown`, which Edit refuses:
 * writing U+FFFD back would destroy them.
 */
export function decodeText(bytes: Uint8Array): DecodedText {
  const utf16 = utf16ByteOrder(bytes);
  if (utf16) return { text: decodeUtf16(bytes, utf16 === 'utf-16be'), encoding: utf16 };
  try {
    return { text: strictUtf8.decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: Buffer.from(bytes).toString('utf8'), encoding: 'unknown' };
  }
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

/**
 * Vim's rule for "read-only": no write bit for anyone, or `access(W_OK)` refuses (owner,
 * group, ACLs, read-only mounts). The mode test matters for root, whom `access` never
 * refuses, so `chmod a-w` still protects a file from an agent running as root.
 */
export async function isWritableFile(path: string): Promise<boolean> {
  const found = await stat(path);
  if ((found.mode & 0o222) === 0) return false;
  try {
    await access(path, constants.W_OK);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return false;
    throw error;
  }
}

/** Below this size a read costs less than the thread-pool round trip it would need. */
const SYNC_READ_MAX_BYTES = 256 * 1024;

export class HostWorkspaceFiles implements WorkspaceFiles {
  constructor(private readonly roots: WorkspaceRoots) {}

  resolve(input: string, context: ToolContext): Promise<PathResolution> {
    return this.roots.resolve(input, context.cwd, { requireAbsolute: true });
  }

  // One stat(2) is cheaper done here than handed to the thread pool and back (measured in the
  // server bench, where every tool call pays it).
  async stat(path: string): Promise<WorkspaceFileStat | undefined> {
    try {
      const found = statSync(path);
      return { size: found.size, isDirectory: found.isDirectory(), isFile: found.isFile(), mtimeMs: found.mtimeMs };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Files up to `SYNC_READ_MAX_BYTES` are read at once; larger ones (or unknown sizes) through the thread pool, so the event loop never waits long. */
  async read(path: string, sizeHint?: number): Promise<Buffer> {
    if (sizeHint !== undefined && sizeHint <= SYNC_READ_MAX_BYTES) return readFileSync(path);
    return readFile(path);
  }

  write(path: string, content: string): Promise<void> {
    return writeFileAtomic(path, content);
  }

  writable(path: string): Promise<boolean> {
    return isWritableFile(path);
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

/**
 * A sandbox stat may carry `isFile` (false for a FIFO, socket or device); clients that do
 * not report it have only files and directories, so a non-directory is a regular file.
 */
type SandboxFileStatWithKind = ISandboxFileStat & { isFile?: boolean };

export class SandboxWorkspaceFiles implements WorkspaceFiles {
  constructor(
    private readonly client: ISandboxClient,
    private readonly root: string,
  ) {}

  async resolve(input: string): Promise<PathResolution> {
    return resolveSandboxPath(input, this.root);
  }

  async stat(path: string): Promise<WorkspaceFileStat | undefined> {
    const found: SandboxFileStatWithKind | undefined = await this.client.stat(path);
    if (!found) return undefined;
    return { size: found.size, isDirectory: found.isDirectory, isFile: found.isFile ?? !found.isDirectory, mtimeMs: found.mtimeMs };
  }

  async read(path: string): Promise<Buffer> {
    return Buffer.from(await this.client.readFile(path));
  }

  write(path: string, content: string): Promise<void> {
    return this.client.writeFile(path, content);
  }

  /** Sandbox clients report no permissions; a refused write surfaces as an I/O error. */
  async writable(): Promise<boolean> {
    return true;
  }
}
