import { posix } from 'node:path';

/** Input fields that name a file or directory, as the built-in and Claude Code tools use them. */
const PATH_FIELDS = ['file_path', 'filePath', 'notebook_path', 'notebookPath', 'path'] as const;

/**
 * `path` under the sandbox `root` as the host path it stands for (`root` ↔ `hostCwd`);
 * undefined for a path outside `root`. Normalised first, so `root/../etc` is not under it.
 */
export function hostPathFor(path: string, root: string, hostCwd: string): string | undefined {
  if (!path.startsWith('/')) return undefined;
  const normalised = posix.normalize(path);
  const base = posix.normalize(root).replace(/\/+$/, '') || '/';
  if (normalised === base) return hostCwd;
  const prefix = base === '/' ? '/' : `${base}/`;
  return normalised.startsWith(prefix) ? posix.join(hostCwd, normalised.slice(prefix.length)) : undefined;
}

/** The input with its path fields moved from the sandbox to the host; the same object when none moves. */
export function hostInput(input: unknown, root: string, hostCwd: string): unknown {
  if (typeof input !== 'object' || input === null) return input;
  let moved: Record<string, unknown> | undefined;
  for (const field of PATH_FIELDS) {
    const value = (input as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    const host = hostPathFor(value, root, hostCwd);
    if (host === undefined) continue;
    moved ??= { ...(input as Record<string, unknown>) };
    moved[field] = host;
  }
  return moved ?? input;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A command's text with the sandbox root replaced by the host cwd wherever it starts a path
 * (`cat /workspace/secrets/k` → `cat <cwd>/secrets/k`), also glued to a short option
 * (`sort -o/workspace/x`, `tar -C/workspace`), for judging only: the command itself runs
 * unchanged in the sandbox. A root that merely starts a longer name (`/workspace2`) is left alone.
 */
export function hostCommand(command: string, root: string, hostCwd: string): string {
  const base = posix.normalize(root).replace(/\/+$/, '');
  if (base === '' || !command.includes(base)) return command;
  const lead = `(^|[\\s'"=:<>|;&(]|(?:^|[\\s'"])-[A-Za-z]+)`;
  return command.replace(new RegExp(`${lead}${escapeRegExp(base)}(?=/|$|[\\s'";&|)<>])`, 'g'), (_match, before: string) => `${before}${hostCwd}`);
}
