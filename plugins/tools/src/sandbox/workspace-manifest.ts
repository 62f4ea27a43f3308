import { TesseraError, type Diagnostic } from '@tessera/contracts';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, posix, resolve } from 'node:path';
import { isInside } from '../workspace.js';
import type { ISandboxClient } from './sandbox-client.js';

/** One thing to put into a fresh sandbox workspace. `path` is relative to the manifest root. */
export type IWorkspaceManifestEntry =
  | { type: 'file'; path: string; content: string }
  | { type: 'directory'; path: string }
  /** A host file, `source` relative to the host root. */
  | { type: 'localFile'; path: string; source: string }
  /** A host directory copied recursively, `source` relative to the host root. */
  | { type: 'localDir'; path: string; source: string };

export interface IWorkspaceManifest {
  /** Absolute workspace root inside the sandbox. Default `/workspace`. */
  root?: string;
  entries: readonly IWorkspaceManifestEntry[];
}

export interface ApplyWorkspaceManifestOptions {
  /** Host directory `localFile` / `localDir` sources are relative to (the project cwd). */
  hostRoot: string;
  /** Used as `file` in diagnostics. Default `<workspace manifest>`. */
  manifestFile?: string;
}

export interface ApplyWorkspaceManifestResult {
  root: string;
  /** Sandbox paths written, in order. */
  files: string[];
  directories: string[];
}

export class WorkspaceManifestError extends TesseraError {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(`The workspace manifest is invalid:\n${diagnostics.map((entry) => `- ${entry.path ?? ''}: ${entry.message}`).join('\n')}`, {
      code: 'workspace_manifest_invalid',
      category: 'validation',
      recoverable: false,
      details: { diagnostics },
    });
  }
}

const SEGMENT_PROBLEM = /[\0\\]/;

/** A relative path that stays inside its root: no absolute form, no `..`, no NUL or backslash. */
function relativePathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string' || path.length === 0) return 'must be a non-empty relative path';
  if (SEGMENT_PROBLEM.test(path)) return 'must not contain NUL bytes or backslashes';
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path)) return 'must be relative to the workspace root, not absolute';
  if (path.split('/').some((segment) => segment === '..')) return 'must not contain ".." segments';
  return undefined;
}

/** Every problem in `manifest`, without touching the sandbox or the host. */
export function validateWorkspaceManifest(manifest: IWorkspaceManifest, file = '<workspace manifest>'): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const report = (path: string, message: string) => problems.push({ severity: 'error', file, path, message });
  const root = manifest.root ?? '/workspace';
  if (!posix.isAbsolute(root) || root.includes('\0')) report('root', `root must be an absolute POSIX path inside the sandbox, got ${JSON.stringify(root)}`);
  if (!Array.isArray(manifest.entries)) {
    report('entries', 'entries must be an array');
    return problems;
  }
  const seen = new Set<string>();
  manifest.entries.forEach((entry, index) => {
    const at = `entries[${index}]`;
    if (!['file', 'directory', 'localFile', 'localDir'].includes(entry?.type)) {
      report(`${at}.type`, 'type must be one of file, directory, localFile, localDir');
      return;
    }
    const pathProblem = relativePathProblem(entry.path);
    if (pathProblem) report(`${at}.path`, `path ${pathProblem}`);
    else {
      const normalized = posix.normalize(entry.path);
      if (seen.has(normalized)) report(`${at}.path`, `path "${entry.path}" appears twice`);
      seen.add(normalized);
    }
    if (entry.type === 'file' && typeof entry.content !== 'string') report(`${at}.content`, 'content must be a string');
    if (entry.type === 'localFile' || entry.type === 'localDir') {
      const sourceProblem = relativePathProblem(entry.source);
      if (sourceProblem) report(`${at}.source`, `source ${sourceProblem} (relative to the host root)`);
    }
  });
  return problems;
}

/** The real path of a host source, checked to be inside the host root and of the kind the entry needs. */
async function hostSource(hostRoot: string, source: string, at: string, kind: 'localFile' | 'localDir'): Promise<string> {
  const problem = (message: string) => new WorkspaceManifestError([{ severity: 'error', file: hostRoot, path: `${at}.source`, message }]);
  const realRoot = await realpath(hostRoot);
  const real = await realpath(resolve(realRoot, source)).catch(() => undefined);
  if (!real) throw problem(`source "${source}" does not exist under ${hostRoot}`);
  if (!isInside(real, realRoot)) throw problem(`source "${source}" resolves outside the host root ${hostRoot} (symbolic link?)`);
  const found = await stat(real);
  if (kind === 'localFile' && !found.isFile()) throw problem(`localFile source "${source}" is not a file; use localDir for a directory`);
  if (kind === 'localDir' && !found.isDirectory()) throw problem(`localDir source "${source}" is not a directory; use localFile for a file`);
  return real;
}

/**
 * Validates `manifest` completely, then writes it into the sandbox: inline files, directories,
 * and copies of host files and directories (symbolic links inside copied directories are
 * skipped, so nothing outside the host root leaks in). Throws `WorkspaceManifestError` before
 * writing anything when the manifest is invalid.
 */
export async function applyWorkspaceManifest(
  client: ISandboxClient,
  manifest: IWorkspaceManifest,
  options: ApplyWorkspaceManifestOptions,
): Promise<ApplyWorkspaceManifestResult> {
  const problems = validateWorkspaceManifest(manifest, options.manifestFile);
  if (problems.length > 0) throw new WorkspaceManifestError(problems);
  const root = posix.normalize(manifest.root ?? '/workspace');
  const result: ApplyWorkspaceManifestResult = { root, files: [], directories: [] };
  // Resolve and check every host source first, so a bad one fails before the sandbox is
  // touched, and every bad one is reported at once.
  const settled = await Promise.allSettled(
    manifest.entries.map((entry, index) =>
      entry.type === 'localFile' || entry.type === 'localDir' ? hostSource(options.hostRoot, entry.source, `entries[${index}]`, entry.type) : undefined,
    ),
  );
  const sourceProblems = settled.flatMap((outcome) => {
    if (outcome.status === 'fulfilled') return [];
    if (outcome.reason instanceof WorkspaceManifestError) return outcome.reason.diagnostics;
    throw outcome.reason;
  });
  if (sourceProblems.length > 0) throw new WorkspaceManifestError(sourceProblems);
  const sources = settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : undefined));
  await client.mkdir(root);
  result.directories.push(root);
  for (const [index, entry] of manifest.entries.entries()) {
    const target = posix.join(root, posix.normalize(entry.path));
    if (entry.type === 'file') {
      await client.writeFile(target, entry.content);
      result.files.push(target);
    } else if (entry.type === 'directory') {
      await client.mkdir(target);
      result.directories.push(target);
    } else if (entry.type === 'localFile') {
      await client.writeFile(target, await readFile(sources[index]!));
      result.files.push(target);
    } else {
      await copyDirectory(client, sources[index]!, target, result);
    }
  }
  return result;
}

async function copyDirectory(client: ISandboxClient, source: string, target: string, result: ApplyWorkspaceManifestResult): Promise<void> {
  await client.mkdir(target);
  result.directories.push(target);
  for (const entry of await readdir(source, { withFileTypes: true })) {
    const from = join(source, entry.name);
    const to = posix.join(target, entry.name);
    if (entry.isDirectory()) await copyDirectory(client, from, to, result);
    else if (entry.isFile()) {
      await client.writeFile(to, await readFile(from));
      result.files.push(to);
    }
  }
}
