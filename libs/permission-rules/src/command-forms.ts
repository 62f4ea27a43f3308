import { parseBashCommand, type BashSubcommand, type BashWord, type ParsedBashCommand } from './bash-command.js';
import { hasWriteTargets, possibleWriteTargets, writeTargets } from './write-targets.js';

/**
 * How one subcommand is compared with rules.
 * - `allowForm`: the command as written, with harmless wrappers (`timeout 10`, `nice`,
 *   `nohup`, `time`, `stdbuf`, `command`, `builtin`, `noglob`, flagless `xargs`) and safe
 *   `VAR=value` prefixes removed. An allow rule must match it whole.
 * - `denyForms`: every reading of the command a deny or ask rule is tested against: as
 *   written, unquoted (`'r''m'` → `rm`), and with every wrapper — `sudo`, `env`, `exec`,
 *   any `VAR=` — stripped.
 * - `name` / `args`: the unquoted command after stripping, for file-command checks.
 */
export interface CommandForms {
  allowForm: string;
  denyForms: string[];
  name: string;
  args: string[];
  /** `args` as the shell will expand them (see `BashWord.pattern`): for telling which paths are certain. */
  patternArgs: string[];
  /** The directory a wrapper runs the command in (`env -C dir`, `env --chdir=dir`), as written. */
  chdir?: string;
  /**
   * Files and directories the command writes through an option or as its destination
   * (`sort -o f`, `tar -x -C d`, `rsync … d`; see `write-targets.ts`), as written. They are
   * judged like output redirections.
   */
  writeTargets: string[];
  /** `writeTargets` as the shell will expand them (see `BashWord.pattern`). */
  writePatterns: string[];
  /** Paths the command may write or not (`git checkout x`: a branch or a file), as patterns; deny and ask rules only. */
  possibleWrites: string[];
  /**
   * The command may write files the text does not show: `xargs` hands a command that writes
   * through its arguments (`xargs git diff`, `xargs sort`) words read from stdin.
   */
  unknownWrites: boolean;
}

export interface AnalyzedBashCommand {
  commands: CommandForms[];
  redirects: ParsedBashCommand['redirects'];
  complete: boolean;
}

// Variables that change what a command loads or runs: never stripped for an allow match.
const UNSAFE_ENV = /^(PATH|LD_\w+|DYLD_\w+|BASH_ENV|ENV|IFS|PS4|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|NODE_OPTIONS|NODE_PATH|PYTHON\w*|PERL\w*|RUBY\w*|GIT_\w+|PAGER|EDITOR|VISUAL|BROWSER|HOME|SHELL|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|CLASSPATH|LESSOPEN|LESSCLOSE|MANPAGER|NPM_CONFIG_\w+|npm_config_\w+|ZDOTDIR|XDG_CONFIG_HOME)$/i;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

interface WrapperSpec {
  /** Options that take a value in the next word. */
  valueFlags?: ReadonlySet<string>;
  /** Positional words before the wrapped command (timeout's duration). */
  positional?: number;
  /** Only stripped for allow matching when no option follows. */
  flaglessOnly?: boolean;
}

const SAFE_WRAPPERS: ReadonlyMap<string, WrapperSpec> = new Map([
  ['timeout', { valueFlags: new Set(['-s', '-k', '--signal', '--kill-after']), positional: 1 }],
  ['time', {}],
  ['nice', { valueFlags: new Set(['-n', '--adjustment']) }],
  ['nohup', {}],
  ['stdbuf', { valueFlags: new Set(['-i', '-o', '-e', '--input', '--output', '--error']) }],
  ['command', {}],
  ['builtin', {}],
  ['noglob', {}],
  ['xargs', { flaglessOnly: true }],
]);

// Stripped only when looking for a deny or ask match: they run their argument as a command.
const DENY_WRAPPERS: ReadonlyMap<string, WrapperSpec> = new Map([
  ...SAFE_WRAPPERS,
  ['xargs', { valueFlags: new Set(['-I', '-n', '-P', '-L', '-d', '-E', '-s', '-a', '--max-args', '--max-procs', '--delimiter', '--arg-file', '--replace']) }],
  ['sudo', { valueFlags: new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '--user', '--group', '--host', '--prompt', '--chdir']) }],
  ['doas', { valueFlags: new Set(['-u', '-C']) }],
  ['env', { valueFlags: new Set(['-u', '-C', '--unset', '--chdir']) }],
  ['exec', { valueFlags: new Set(['-a']) }],
  ['chroot', { positional: 1 }],
  ['caffeinate', {}],
  ['unbuffer', {}],
  ['setsid', {}],
  ['ionice', { valueFlags: new Set(['-c', '-n', '-p']) }],
  ['chrt', { positional: 1 }],
  ['strace', { valueFlags: new Set(['-o', '-e', '-p', '-s']) }],
  ['ltrace', {}],
  ['watch', { valueFlags: new Set(['-n', '-d', '--interval']) }],
]);

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'ash', 'busybox']);

const baseName = (value: string): string => value.slice(value.lastIndexOf('/') + 1);

function isAssignment(word: BashWord): boolean {
  return ASSIGNMENT.test(word.raw);
}

/** Index of the first word after `wrapper`'s own options, or -1 when it cannot be stripped. */
function skipWrapper(words: readonly BashWord[], at: number, spec: WrapperSpec, strict: boolean): number {
  let i = at + 1;
  if (strict && spec.flaglessOnly && words[i]?.value.startsWith('-')) return -1;
  while (i < words.length) {
    const value = words[i]!.value;
    if (value === '--') {
      i += 1;
      break;
    }
    if (!value.startsWith('-') || value === '-') break;
    const flag = value.includes('=') ? value.slice(0, value.indexOf('=')) : value;
    i += spec.valueFlags?.has(flag) && !value.includes('=') ? 2 : 1;
  }
  // `env` also takes assignments before the command.
  while (baseName(words[at]!.value) === 'env' && i < words.length && isAssignment(words[i]!)) i += 1;
  i += spec.positional ?? 0;
  return i < words.length ? i : -1;
}

/** Strips leading assignments and wrappers; returns the index of the real command word. */
function commandStart(words: readonly BashWord[], strict: boolean): number {
  const wrappers = strict ? SAFE_WRAPPERS : DENY_WRAPPERS;
  let i = 0;
  for (let guard = 0; guard < 32 && i < words.length; guard++) {
    const word = words[i]!;
    if (isAssignment(word)) {
      const name = word.value.slice(0, word.value.indexOf('='));
      if (strict && UNSAFE_ENV.test(name)) return i;
      i += 1;
      continue;
    }
    // A deny rule also sees through a wrapper named by its path (`/usr/bin/env rm x`).
    const spec = wrappers.get(strict ? word.value : baseName(word.value));
    if (!spec || (strict && word.raw !== word.value)) return i;
    const next = skipWrapper(words, i, spec, strict);
    if (next === -1) return i;
    i = next;
  }
  return i;
}

const join = (words: readonly BashWord[], key: 'raw' | 'value'): string => words.map((word) => word[key]).join(' ');

/**
 * `env -S 'cmd args'` (`-Scmd`, `--split-string=…`) among the wrapper words: env splits the
 * string into the command it runs, followed by the words after it.
 */
function envSplitStrings(words: readonly BashWord[], commandAt: number): string[] {
  const found: string[] = [];
  let inEnv = false;
  for (let i = 0; i < words.length; i++) {
    const value = words[i]!.value;
    if (baseName(value) === 'env' && i <= commandAt) inEnv = true;
    else if (!inEnv) continue;
    else if (!value.startsWith('-')) {
      if (!isAssignment(words[i]!)) inEnv = false;
    } else {
      let split: string | undefined;
      // `-u NAME`, `-C DIR`, `-a NAME` (also in a cluster, `-iu NAME`) and their long forms take the next word.
      if (['--unset', '--chdir', '--argv0'].includes(value) || (/^-[a-zA-Z]*[uCa]$/.test(value) && !/^-[a-zA-Z]*S/.test(value))) {
        i += 1;
        continue;
      }
      if (value === '-S' || value === '--split-string') split = words[++i]?.value;
      else if (value.startsWith('--split-string=')) split = value.slice('--split-string='.length);
      else if (/^-[a-zA-Z]*S/.test(value)) split = value.slice(value.indexOf('S') + 1);
      if (split !== undefined) found.push([split, ...words.slice(i + 1).map((word) => word.raw)].join(' '));
    }
  }
  return found;
}

/** The action of `trap 'cmd' SIGNAL…`: the shell runs it when the signal arrives. */
function trapAction(words: readonly BashWord[]): string | undefined {
  let i = 1;
  while (words[i] !== undefined && /^-[lp]*$/.test(words[i]!.value) && words[i]!.value !== '-') i += 1;
  if (words[i]?.value === '--') i += 1;
  // With one operand it is a signal to reset; `-` resets the listed signals.
  return words[i + 1] !== undefined && words[i]!.value !== '-' ? words[i]!.value : undefined;
}

/** Commands a subcommand runs by itself: `sh -c '…'`, `eval …`, `find … -exec … ;`, `trap '…' EXIT`. */
function innerCommands(words: readonly BashWord[]): string[] {
  const name = words[0]?.value ?? '';
  const base = name.slice(name.lastIndexOf('/') + 1);
  const found: string[] = [];
  if (base === 'trap') {
    const action = trapAction(words);
    if (action !== undefined) found.push(action);
  }
  if (SHELLS.has(base)) {
    for (let i = 1; i < words.length; i++) {
      const value = words[i]!.value;
      if (/^-[a-z]*c[a-z]*$/i.test(value) && words[i + 1]) {
        found.push(words[i + 1]!.value);
        break;
      }
    }
  } else if (base === 'eval' || base === 'source' || base === '.') {
    if (base === 'eval') found.push(words.slice(1).map((word) => word.value).join(' '));
  } else if (base === 'find' || base === 'fd') {
    for (let i = 1; i < words.length; i++) {
      if (/^-(exec|execdir|ok|okdir|x|X|-exec|-exec-batch)$/.test(words[i]!.value)) {
        const rest: string[] = [];
        for (i += 1; i < words.length && !/^(;|\+|\\;)$/.test(words[i]!.value); i++) rest.push(words[i]!.raw);
        found.push(rest.join(' '));
      }
    }
  }
  return found.filter((text) => text.trim().length > 0);
}

function formsOf(sub: BashSubcommand): CommandForms {
  const { words } = sub;
  const strictStart = commandStart(words, true);
  const looseStart = commandStart(words, false);
  const stripped = words.slice(looseStart);
  const denyForms = new Set([
    join(words, 'raw'),
    join(words, 'value'),
    join(stripped, 'value'),
    join(stripped, 'raw'),
    join(words.slice(strictStart), 'raw'),
  ]);
  const name = stripped[0]?.value ?? '';
  const base = name.slice(name.lastIndexOf('/') + 1);
  // `/bin/rm x` is `rm x` to a deny rule.
  if (base !== name) denyForms.add([base, ...stripped.slice(1).map((word) => word.value)].join(' '));
  const chdir = wrapperDirectory(words.slice(0, looseStart));
  const args = stripped.slice(1).map((word) => word.value);
  const patternArgs = stripped.slice(1).map((word) => word.pattern);
  return {
    allowForm: join(words.slice(strictStart), 'raw'),
    denyForms: [...denyForms],
    name: base,
    args,
    patternArgs,
    ...(chdir === undefined ? {} : { chdir }),
    writeTargets: writeTargets(base, args),
    writePatterns: writeTargets(base, patternArgs),
    possibleWrites: possibleWriteTargets(base, patternArgs),
    unknownWrites: feedsWriter(words.slice(0, looseStart), base),
  };
}

/**
 * Whether an `xargs` among the wrappers hands stdin words to a command that can write
 * through its arguments: those words (`--output=f`) are not in the text.
 */
function feedsWriter(wrappers: readonly BashWord[], name: string): boolean {
  return wrappers.some((word) => baseName(word.value) === 'xargs') && (hasWriteTargets(name) || name === 'find');
}

/** `env -C dir` / `env --chdir dir` / `env --chdir=dir` among the stripped wrapper words. */
function wrapperDirectory(wrappers: readonly BashWord[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < wrappers.length; i++) {
    const value = wrappers[i]!.value;
    if (value.startsWith('--chdir=')) found = value.slice('--chdir='.length);
    else if ((value === '-C' || value === '--chdir') && wrappers[i + 1]) found = wrappers[i + 1]!.value;
    else if (/^-C./.test(value)) found = value.slice(2);
  }
  return found;
}

/** Reads a Bash command into the forms rules are matched against (see `CommandForms`). */
export function analyzeBashCommand(command: string, depth = 0): AnalyzedBashCommand {
  const parsed = parseBashCommand(command);
  const commands: CommandForms[] = [];
  const redirects = [...parsed.redirects];
  let complete = parsed.complete;
  for (const sub of parsed.subcommands) {
    commands.push(formsOf(sub));
    if (depth > 8) {
      complete = false;
      continue;
    }
    const looseStart = commandStart(sub.words, false);
    for (const inner of [...innerCommands(sub.words.slice(looseStart)), ...envSplitStrings(sub.words, looseStart)]) {
      const nested = analyzeBashCommand(inner, depth + 1);
      commands.push(...nested.commands);
      redirects.push(...nested.redirects);
      complete &&= nested.complete;
    }
  }
  return { commands, redirects, complete };
}
