import { execFile } from 'node:child_process';
import { TesseraError } from '@tessera/contracts';

/** One commit as `git log` reports it. */
export interface GitCommit {
  hash: string;
  shortHash: string;
  author: string;
  /** Author date, `YYYY-MM-DD`. */
  date: string;
  subject: string;
  /** The message body, cut to `MAX_BODY_CHARS`. */
  body: string;
}

export interface GitLogRequest {
  /** A revision range (`v1.0..HEAD`, `v1.0...v1.1`, `HEAD~20..`) or a single revision. */
  range: string;
  /** Only commits touching these paths (git pathspecs, relative to `cwd`). */
  paths?: readonly string[];
  /** At most this many commits, newest first; default `DEFAULT_MAX_COMMITS`. */
  maxCommits?: number;
  signal?: AbortSignal;
}

export interface GitLogResult {
  commits: GitCommit[];
  /** True when the range holds more than `maxCommits` commits. */
  truncated: boolean;
}

export const DEFAULT_MAX_COMMITS = 200;
export const MAX_COMMITS = 1000;
const MAX_BODY_CHARS = 600;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const TIMEOUT_MS = 15_000;

// Revisions, `..`/`...`, `~n`, `^`, `@{…}`: what a range needs, and nothing a shell or git would
// read as an option. Pathspecs come after `--`, so git never reads them as options either.
const RANGE = /^[A-Za-z0-9_./~^@{}:+-]+$/;
const FIELD = '\x1f';
const RECORD = '\x1e';
const FORMAT = ['%H', '%h', '%an', '%ad', '%s', '%b'].join('%x1f') + '%x1e';

/** Why `git log` could not answer; `code` tells a caller (or the model) what to fix. */
export class GitLogError extends TesseraError {
  constructor(message: string, code: 'git_log_bad_range' | 'git_log_not_a_repository' | 'git_not_found' | 'git_log_failed', details: Record<string, unknown>, cause?: unknown) {
    super(message, { code, category: code === 'git_log_bad_range' ? 'validation' : 'tool', recoverable: code !== 'git_not_found', details, ...(cause === undefined ? {} : { cause }) });
  }
}

/**
 * Runs `git log` for a range in `cwd` with `execFile` (no shell), bounded in commits, bytes and
 * time. A range git does not know becomes a `GitLogError` that says how to find a valid one.
 */
export async function readGitLog(cwd: string, request: GitLogRequest): Promise<GitLogResult> {
  const range = request.range.trim();
  if (range === '' || range.startsWith('-') || !RANGE.test(range)) {
    throw new GitLogError(
      `"${request.range}" is not a revision range. Use the form <from>..<to>, for example v1.0..HEAD (tags: git tag --list).`,
      'git_log_bad_range',
      { range: request.range },
    );
  }
  const maxCommits = Math.min(Math.max(1, Math.trunc(request.maxCommits ?? DEFAULT_MAX_COMMITS)), MAX_COMMITS);
  const paths = request.paths ?? [];
  // One more than asked for, to know whether the range was cut.
  const args = ['log', '--no-color', '--no-show-signature', '--date=short', `--format=${FORMAT}`, `--max-count=${maxCommits + 1}`, range, '--', ...paths];
  const stdout = await runGit(cwd, args, range, request.signal);
  const commits = stdout
    .split(RECORD)
    .map((record) => record.replace(/^\n/, ''))
    .filter((record) => record !== '')
    .map(parseCommit);
  return { commits: commits.slice(0, maxCommits), truncated: commits.length > maxCommits };
}

function parseCommit(record: string): GitCommit {
  const [hash = '', shortHash = '', author = '', date = '', subject = '', body = ''] = record.split(FIELD);
  const trimmed = body.trim();
  return { hash, shortHash, author, date, subject, body: trimmed.length > MAX_BODY_CHARS ? `${trimmed.slice(0, MAX_BODY_CHARS)}…` : trimmed };
}

function runGit(cwd: string, args: string[], range: string, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd, encoding: 'utf8', maxBuffer: MAX_OUTPUT_BYTES, timeout: TIMEOUT_MS, windowsHide: true, env: { ...process.env, GIT_PAGER: 'cat', LC_ALL: 'C' }, ...(signal ? { signal } : {}) },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        reject(explain(error as NodeJS.ErrnoException & { killed?: boolean }, stderr, cwd, range));
      },
    );
  });
}

function explain(error: NodeJS.ErrnoException & { killed?: boolean }, stderr: string, cwd: string, range: string): Error {
  if (error.name === 'AbortError') return error;
  const said = stderr.trim().split('\n')[0] ?? '';
  if (error.code === 'ENOENT') return new GitLogError('git is not installed or not on PATH; install git and try again.', 'git_not_found', { cwd }, error);
  if (/not a git repository/i.test(stderr)) {
    return new GitLogError(`${cwd} is not inside a git repository; run relnotes from the repository (or pass --cwd).`, 'git_log_not_a_repository', { cwd }, error);
  }
  if (/unknown revision|bad revision|ambiguous argument|invalid revision|bad default revision/i.test(stderr)) {
    return new GitLogError(
      `git does not know the range "${range}" (${said}). List tags with git tag --list, or use commit hashes; the form is <from>..<to>, e.g. v1.0..HEAD.`,
      'git_log_bad_range',
      { cwd, range },
      error,
    );
  }
  if (error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
    return new GitLogError(`git log ${range} printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MB; narrow the range or pass paths.`, 'git_log_failed', { cwd, range }, error);
  }
  if (error.killed) return new GitLogError(`git log ${range} took longer than ${TIMEOUT_MS / 1000} s; narrow the range.`, 'git_log_failed', { cwd, range }, error);
  return new GitLogError(`git log ${range} failed: ${said || error.message}`, 'git_log_failed', { cwd, range }, error);
}

/** Commits as the model reads them: one line each, the body indented below when there is one. */
export function formatCommits(result: GitLogResult, range: string): string {
  if (result.commits.length === 0) return `No commits in ${range}.`;
  const lines = [`${result.commits.length}${result.truncated ? '+' : ''} commit${result.commits.length === 1 ? '' : 's'} in ${range}, newest first:`];
  for (const commit of result.commits) {
    lines.push(`- ${commit.shortHash} ${commit.subject} (${commit.author}, ${commit.date})`);
    if (commit.body !== '') lines.push(...commit.body.split('\n').map((line) => `    ${line}`));
  }
  if (result.truncated) lines.push(`(More commits in ${range} were left out; ask for a narrower range or pass paths.)`);
  return lines.join('\n');
}
