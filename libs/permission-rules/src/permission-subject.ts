import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { analyzeBashCommand, type AnalyzedBashCommand } from './command-forms.js';
import { expandHome, pathCandidates, type PathAnchors } from './path-match.js';
import { expandShellPath } from './shell-path.js';
import type { JudgedTool } from './tool-family.js';
import { copyWith } from '@tessera/contracts';

/**
 * Files a Bash command reads, writes (file commands) and redirects output to; each as path
 * candidates. After a `cd` inside the command, a relative path has one candidate group per
 * directory the shell may be in by then, so a deny rule is tested against all of them.
 */
export interface BashFiles {
  reads: string[][];
  /** Arguments of file commands that write (`cp`, `tee`, `sed`…): checked against Edit denies. */
  writes: string[][];
  /**
   * Output redirections and what commands write through options or as their destination
   * (`sort -o f`, `curl -O`, `tar -x -C d`, `rsync … d`): Edit denies, and an Edit allow
   * next to a Bash allow, as for `> f`.
   */
  outputs: string[][];
  /** What `rm` / `rmdir` remove, in every directory the shell may be in when they run. */
  removes: string[][];
  /** The command changes directory (`cd`, `pushd`, `popd`) before it is done. */
  changesDirectory: boolean;
  /**
   * A relative file argument or redirection comes after a `cd` whose target cannot be read
   * (`cd "$DIR"`, `cd -`, `popd`): where it points is unknown, so no rule may allow it.
   */
  unresolvedPaths: boolean;
  /**
   * Paths the shell expands when the command runs (`cat .en?`, `cp a secre?s/x`, `> $OUT`,
   * `xargs git diff`): which files they name is not known here. Deny rules that could match
   * one of a glob's expansions deny it; an unknown path is checked by asking (see
   * `uncertainMatch`); no allow rule or mode allows an uncertain output.
   */
  uncertain: UncertainPath[];
}

export interface UncertainPath {
  /** `read` and `write` as for `reads` / `writes`; `output` as for `outputs`. */
  access: 'read' | 'write' | 'output';
  /** Absolute shell glob (quoted characters backslash-escaped), or undefined when it may be any path. */
  glob: string | undefined;
}

/** What a tool call is checked as: the parts of its input that rules can name. */
export type PermissionSubject =
  | {
      kind: 'bash';
      command: string;
      analyzed: AnalyzedBashCommand;
      files: () => BashFiles;
      /** Path candidates of one of the command's path arguments, resolved where the command runs. */
      resolvePath: (path: string) => string[];
    }
  | { kind: 'path'; family: 'Read' | 'Edit'; candidates: string[] | undefined }
  | { kind: 'domain'; url: string; host: string | undefined }
  | { kind: 'value'; value: string | undefined }
  | { kind: 'other' };

// Commands whose arguments are files they read or write; Read/Edit denies reach them.
const READ_COMMANDS = new Set(
  'cat head tail less more bat batcat nl od xxd hexdump strings base64 wc sort uniq cut tac rev file stat diff cmp grep egrep fgrep rg ag ack awk gawk sed source . jq yq ls tree find du md5sum sha1sum sha256sum shasum iconv column paste fold fmt pr tar zip unzip gzip gunzip zcat bzcat xzcat cp mv rsync scp install dd vim vi nvim nano emacs view open xdg-open readlink realpath'.split(' '),
);
const WRITE_COMMANDS = new Set(
  'rm rmdir mv cp touch mkdir tee chmod chown chgrp ln truncate dd shred unlink install rsync scp sed patch split csplit tar unzip gzip gunzip'.split(' '),
);
const DEVICE_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '-']);

export function resolveAnchors(context: { cwd?: string; settingsRoot?: string; homeDir?: string }): PathAnchors {
  const cwd = context.cwd ?? process.cwd();
  return { cwd, settingsRoot: context.settingsRoot ?? cwd, homeDir: context.homeDir ?? homedir() };
}

function stringField(input: unknown, ...names: string[]): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  for (const name of names) {
    const value = (input as Record<string, unknown>)[name];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/** Arguments of a file command that name files (options skipped; `dd if=/of=` unwrapped). */
function pathArguments(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (arg === '' || arg === '--') continue;
    const dd = /^(?:if|of)=(.+)$/.exec(arg);
    if (dd) out.push(dd[1]!);
    else if (arg.startsWith('--') && arg.includes('=')) out.push(arg.slice(arg.indexOf('=') + 1));
    else if (!arg.startsWith('-')) out.push(arg);
  }
  return out;
}

function shellPath(arg: string, anchors: PathAnchors): string {
  return expandHome(arg.replace(/^\$\{?HOME\}?(?=\/|$)/, '~'), anchors.homeDir);
}

/** A `cd` target that names one directory, or undefined when it depends on the shell's state. */
function literalDirectory(target: string): boolean {
  return !/[$`*?[{]/.test(target) && target !== '-' && !/^~[^/]/.test(target);
}

/**
 * `anchors` here resolve the command's paths: their `cwd` is where the command starts. A
 * `cd` moves later relative paths; since `&&`, `||`, subshells and loops decide at run time
 * whether it happens, each path is resolved in every directory the shell may be in by then
 * (where it started, and after each `cd` so far).
 */
function bashFiles(analyzed: AnalyzedBashCommand, anchors: PathAnchors): BashFiles {
  const reads: string[][] = [];
  const writes: string[][] = [];
  const outputs: string[][] = [];
  const removes: string[][] = [];
  let dirs = [anchors.cwd];
  let changesDirectory = false;
  let unknownDirectory = false;
  let unresolvedPaths = false;
  const uncertain: UncertainPath[] = [];
  const literal = (path: string, within: readonly string[]): string[][] => {
    if (unknownDirectory && !isAbsolute(path)) unresolvedPaths = true;
    if (isAbsolute(path)) return [pathCandidates(path, anchors)];
    return within.map((cwd) => pathCandidates(path, copyWith(anchors, { cwd })));
  };
  // `pattern` is the word as the shell expands it: a path with a glob, braces or a variable
  // becomes candidates for each path it certainly names, and uncertain paths for the rest.
  const groups = (pattern: string, access: UncertainPath['access'], within: readonly string[] = dirs): string[][] => {
    const out: string[][] = [];
    for (const cwd of within) {
      const expanded = expandShellPath(pattern, cwd, anchors.homeDir);
      if (expanded.kind === 'unknown') uncertain.push({ access, glob: undefined });
      else if (expanded.kind === 'glob') {
        if (unknownDirectory && !expanded.patterns.every((glob) => isAbsolute(glob))) unresolvedPaths = true;
        for (const glob of expanded.patterns) uncertain.push({ access, glob });
      } else for (const path of expanded.paths) out.push(...literal(path, [cwd]));
    }
    return out;
  };
  for (const forms of analyzed.commands) {
    if (forms.name === 'cd' || forms.name === 'pushd' || forms.name === 'popd') {
      changesDirectory = true;
      // `cd -` (the previous directory) reads like an option: checked before options are skipped.
      const previous = forms.args.includes('-');
      const target = forms.name === 'popd' || previous ? undefined : pathArguments(forms.args)[0];
      // A bare `cd` goes home; a bare `pushd` or any `popd` goes to a directory on the stack.
      if (forms.name === 'cd' && target === undefined && !previous) dirs = [...new Set([...dirs, anchors.homeDir])];
      else if (target === undefined || !literalDirectory(target)) unknownDirectory = true;
      else {
        const path = shellPath(target, anchors);
        dirs = [...new Set([...dirs, ...dirs.map((dir) => resolve(dir, path))])];
      }
      continue;
    }
    const isRead = READ_COMMANDS.has(forms.name);
    const isWrite = WRITE_COMMANDS.has(forms.name);
    if (!isRead && !isWrite && forms.writeTargets.length === 0 && forms.possibleWrites.length === 0 && !forms.unknownWrites) continue;
    const removing = forms.name === 'rm' || forms.name === 'rmdir';
    // `env -C dir cmd` runs this one command in `dir`: its paths are judged there too.
    let within = dirs;
    if (forms.chdir !== undefined) {
      changesDirectory = true;
      if (!literalDirectory(forms.chdir)) unknownDirectory = true;
      else within = [...new Set([...dirs, ...dirs.map((dir) => resolve(dir, shellPath(forms.chdir!, anchors)))])];
    }
    if (isRead || isWrite) {
      for (const arg of pathArguments(forms.patternArgs)) {
        if (isRead) reads.push(...groups(arg, 'read', within));
        if (isWrite) {
          const written = groups(arg, 'write', within);
          writes.push(...written);
          if (removing) removes.push(...written);
        }
      }
    }
    // Written through an option or as the destination (`sort -o f`, `tar -x -C d`): like `> f`.
    for (const target of forms.writePatterns) {
      if (DEVICE_TARGETS.has(target)) continue;
      outputs.push(...groups(target, 'output', within));
    }
    for (const target of forms.possibleWrites) writes.push(...groups(target, 'write', within));
    if (forms.unknownWrites) uncertain.push({ access: 'output', glob: undefined });
  }
  // Redirections are not ordered against the commands here: each is resolved in every directory.
  for (const redirect of analyzed.redirects) {
    if (DEVICE_TARGETS.has(redirect.target) || /^&?\d+$/.test(redirect.target)) continue;
    if (redirect.direction === 'in') reads.push(...groups(redirect.pattern, 'read'));
    else outputs.push(...groups(redirect.pattern, 'output'));
  }
  return { reads, writes, outputs, removes, changesDirectory, unresolvedPaths, uncertain };
}

function bashSubject(command: string, anchors: PathAnchors): PermissionSubject {
  const analyzed = analyzeBashCommand(command);
  let files: BashFiles | undefined;
  // Resolving real paths costs a syscall each: only done when a rule or the mode needs it.
  return {
    kind: 'bash',
    command,
    analyzed,
    files: () => (files ??= bashFiles(analyzed, anchors)),
    resolvePath: (path) => pathCandidates(path, anchors),
  };
}

const PATH_FIELDS = ['file_path', 'filePath', 'notebook_path', 'notebookPath', 'path'];

/**
 * Builds the subject for a tool call: what its family's rules look at, read from the field
 * the tool declares (`tool.subjectField`) or else the built-in tools' fields. A Bash command's
 * relative paths resolve in `commandCwd` (the shell's directory after an earlier `cd`),
 * default `anchors.cwd`; rules stay anchored at `anchors`.
 */
export function permissionSubject(tool: JudgedTool, input: unknown, anchors: PathAnchors, commandCwd?: string): PermissionSubject {
  const { name, family, subjectField } = tool;
  const field = (...builtIn: string[]): string | undefined =>
    subjectField === undefined ? stringField(input, ...builtIn) : stringField(input, subjectField);
  if (family === 'Bash') {
    return bashSubject(field('command', 'cmd') ?? '', commandCwd === undefined ? anchors : copyWith(anchors, { cwd: commandCwd }));
  }
  if (family === 'Read' || family === 'Edit') {
    let path = field(...PATH_FIELDS);
    if (path === undefined && (name === 'Glob' || name === 'Grep' || name === 'LS')) path = anchors.cwd;
    return { kind: 'path', family, candidates: path === undefined ? undefined : pathCandidates(path, anchors) };
  }
  if (family === 'WebFetch') {
    const url = field('url') ?? '';
    let host: string | undefined;
    try {
      host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
    } catch {
      host = undefined;
    }
    return { kind: 'domain', url, host };
  }
  if (name === 'Agent') return { kind: 'value', value: stringField(input, 'subagent_type', 'subagentType', 'agent') };
  if (name === 'Skill') return { kind: 'value', value: stringField(input, 'skill', 'name', 'command') };
  return { kind: 'other' };
}

/** Every string inside a value (bounded), for deny rules on tools Tessera does not know. */
export function stringsIn(value: unknown, out: string[] = [], depth = 0): string[] {
  if (out.length > 256 || depth > 8) return out;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, out, depth + 1);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) stringsIn(item, out, depth + 1);
  return out;
}
