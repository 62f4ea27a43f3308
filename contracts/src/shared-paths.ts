import { createToken } from './token.js';

/**
 * Where each session's shell is now. Bash carries a `cd` over to the session's next call, so
 * a relative path in a later command resolves against that directory, not the session's cwd.
 * Bound by the built-in tools; read by the permission layer (to resolve a command's relative
 * paths where it will run) and by the hook runner (Claude Code's hook input `cwd` follows `cd`).
 */
export interface ShellDirectories {
  /** The session's shell directory, or undefined before any `cd` (then it is the session cwd). */
  cwdFor(sessionId: string): string | undefined;
}

/** The sessions' shell directories, bound by the Bash tool plugin (`bashToolPlugin()`). Optional: without it every command resolves against the session cwd. */
export const ShellDirectories = createToken<ShellDirectories>('ShellDirectories');

/**
 * Read-permission rules as a path test, for tools that read many files in one call. Claude
 * Code applies `Read(…)` deny rules to Glob and Grep: a denied file must not show up in their
 * results or be searched. Bound by the permission layer.
 */
export interface ReadAccess {
  /**
   * A test for absolute paths, prepared once per tool call; undefined when no rule can deny a
   * read for this session, so callers skip the check entirely.
   */
  deniedPaths(context: { cwd: string; sessionId: string }): ((absolutePath: string) => boolean) | undefined;
}

/** The read-deny test, bound by `permissionsPlugin()`. Optional: without it Glob and Grep filter nothing. */
export const ReadAccess = createToken<ReadAccess>('ReadAccess');

/**
 * Directories the configuration grants a session besides its cwd — Claude Code's
 * `permissions.additionalDirectories`. Bound by the permission layer; the file tools add them
 * to their workspace roots, so one setting lets the tools reach a directory and the rules
 * judge it.
 */
export interface WorkspaceGrants {
  /** Absolute directories, relative entries resolved against `cwd`. */
  additionalDirectories(cwd: string): readonly string[];
}

/** The extra directories granted by configuration, bound by `permissionsPlugin()`. Optional: without it the file tools work in the cwd only. */
export const WorkspaceGrants = createToken<WorkspaceGrants>('WorkspaceGrants');

/**
 * Where the file tools work when they run in a sandbox: `root` inside the sandbox stands for
 * the session's host `cwd` (the workspace manifest copies the project there). The permission
 * layer judges `root/a/b` as `<cwd>/a/b`, so rules written for the project (`Read(./secrets/**)`)
 * hold inside the sandbox too. Bound by the built-in tools when a sandbox is configured.
 */
export interface SandboxPaths {
  /** Absolute POSIX path of the sandbox workspace root, e.g. `/workspace`. */
  readonly root: string;
}

/** The sandbox root, bound by `sandboxPathsPlugin()` when a sandbox is configured; unbound means the tools run on the host. */
export const SandboxPaths = createToken<SandboxPaths>('SandboxPaths');

/**
 * True when `path` is `root` or lies under it. Both must be absolute and normalised (resolved or
 * real paths): the comparison is on the text, so containment checks resolve symbolic links first.
 */
export function isInsidePath(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(SEPARATOR) ? root : root + SEPARATOR);
}

/** The platform's path separator, without importing node:path (contracts load anywhere). A `\\` in a POSIX name is a character, not a separator. */
const SEPARATOR = (globalThis as { process?: { platform?: string } }).process?.platform === 'win32' ? '\\' : '/';
