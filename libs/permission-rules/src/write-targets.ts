import { basename, isAbsolute, join } from 'node:path';

/**
 * Files and directories a command writes through an option (`sort -o f`, `curl -o f`,
 * `tar -x -C dir`, `dd of=f`, `cp -t dir`) or as its destination operand (`rsync … dest`,
 * `install … dest`, `ln … link`). The evaluator judges each like an output redirection:
 * Edit deny/ask rules, an Edit allow next to a Bash allow, and acceptEdits' working
 * directories. A directory written into under names the command picks (an extraction,
 * `format-patch -o`, `curl -O`) is judged as the directory itself. Paths are returned as
 * written (unquoted); resolving them is the caller's job. Pure string work, no I/O.
 */

interface OptionGrammar {
  /** Short options that take a value, glued or in the next word (`-o f`, `-of`, `-ro f`). */
  shortValues: string;
  /** Long options that take a value (`--output f`, `--output=f`); write options first. */
  longValues: readonly string[];
  /** Long options without a value that change what is written. */
  longFlags?: readonly string[];
}

interface ParsedOption {
  /** `-o`, or the long option's full name once an abbreviation is resolved. */
  name: string;
  value: string | undefined;
}

interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
}

/**
 * GNU getopt also takes an unambiguous prefix (`--out` for `--output`). An ambiguous one
 * makes the command fail, so taking the first known name that fits only errs towards a
 * write (the grammars list write options first).
 */
function longName(written: string, grammar: OptionGrammar): string {
  const known = [...grammar.longValues, ...(grammar.longFlags ?? [])];
  if (known.includes(written)) return written;
  return known.find((name) => name.startsWith(written)) ?? written;
}

/** Reads arguments the getopt way: options anywhere, clusters of short flags, `--` ends options. */
function parseOptions(args: readonly string[], grammar: OptionGrammar): ParsedArgs {
  const options: ParsedOption[] = [];
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      const name = longName(equals === -1 ? arg : arg.slice(0, equals), grammar);
      if (equals !== -1) options.push({ name, value: arg.slice(equals + 1) });
      else if (grammar.longValues.includes(name)) options.push({ name, value: args[++i] });
      else options.push({ name, value: undefined });
    } else if (arg.startsWith('-') && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const flag = arg[j]!;
        if (grammar.shortValues.includes(flag)) {
          options.push({ name: `-${flag}`, value: j + 1 < arg.length ? arg.slice(j + 1) : args[++i] });
          break;
        }
        options.push({ name: `-${flag}`, value: undefined });
      }
    } else operands.push(arg);
  }
  return { options, operands };
}

function valuesOf(parsed: ParsedArgs, ...names: string[]): string[] {
  const out: string[] = [];
  for (const option of parsed.options) if (option.value !== undefined && names.includes(option.name)) out.push(option.value);
  return out;
}

const has = (parsed: ParsedArgs, ...names: string[]): boolean => parsed.options.some((option) => names.includes(option.name));

/** `path` inside `dir` (a `git -C` or `--output-dir` directory); absolute, `~` and stdout (`-`) paths stay. */
function within(dir: string | undefined, path: string): string {
  if (dir === undefined || path === '-' || isAbsolute(path) || /^(~|\$\{?HOME\b)/.test(path)) return path;
  return join(dir, path);
}

/** `host:path`, `user@host:path`, `host::module`, `rsync://…`, `scp://…`: a file on another machine. */
const isRemote = (operand: string): boolean => /^[^/]*:/.test(operand);

const SORT: OptionGrammar = {
  shortValues: 'oktST',
  longValues: ['--output', '--key', '--field-separator', '--buffer-size', '--temporary-directory', '--parallel', '--batch-size', '--files0-from', '--compress-program', '--sort', '--random-source'],
};

// Options git takes before its subcommand that consume the next word.
const GIT_GLOBAL_VALUES = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix']);
// Subcommands where `-o` names an output; elsewhere it means something else (`ls-files -o`, `commit -o`).
const GIT_SHORT_OUTPUT = new Set(['format-patch', 'archive', 'bugreport']);

// Options of the subcommands below that take a value in the next word.
const GIT_CLONE: OptionGrammar = {
  shortValues: 'bojuc',
  longValues: ['--separate-git-dir', '--branch', '--origin', '--depth', '--reference', '--reference-if-able', '--config', '--template', '--upload-pack', '--jobs', '--filter', '--shallow-since', '--shallow-exclude', '--server-option', '--bundle-uri', '--ref-format', '--object-format'],
};
const GIT_WORKTREE_ADD: OptionGrammar = { shortValues: 'bB', longValues: ['--reason'] };
const GIT_CHECKOUT: OptionGrammar = { shortValues: 'bBsU', longValues: ['--source', '--conflict', '--pathspec-from-file', '--orphan', '--unified', '--inter-hunk-context'] };

/**
 * Whether `git restore …` writes the work tree: `--staged` (`-S`) alone only resets the index;
 * `--worktree` (`-W`), or neither option, writes the files.
 */
function restoresWorkTree(rest: readonly string[]): boolean {
  let staged = false;
  let worktree = false;
  for (let i = 0; i < rest.length && rest[i] !== '--'; i++) {
    const word = rest[i]!;
    if (word === '--staged') staged = true;
    else if (word === '--worktree') worktree = true;
    else if (/^-[^-]/.test(word)) {
      // A short cluster ends at an option that takes a value (`-sHEAD`).
      for (const flag of word.slice(1)) {
        if (flag === 'S') staged = true;
        else if (flag === 'W') worktree = true;
        else if (GIT_CHECKOUT.shortValues.includes(flag)) break;
      }
    }
  }
  return worktree || !staged;
}

/**
 * The work tree a subcommand writes: `clone`'s destination (or the directory named after the
 * repository), `init`'s directory, `worktree add`'s path, the files `checkout` / `restore`
 * put back from the index, and everything under `reset --hard`. (`checkout <name>` with no
 * `--` may name a branch or a file: see `possibleWriteTargets`.)
 */
function gitWorkTreeWrites(subcommand: string, rest: readonly string[]): string[] {
  if (subcommand === 'clone') {
    const parsed = parseOptions(rest, GIT_CLONE);
    const [source, destination] = parsed.operands;
    const written = valuesOf(parsed, '--separate-git-dir');
    if (destination !== undefined) written.push(destination);
    else if (source !== undefined) written.push(basename(source.replace(/\/+$/, '')).replace(/\.git$/, '') || '.');
    return written;
  }
  if (subcommand === 'init') {
    const parsed = parseOptions(rest, { shortValues: 'b', longValues: ['--separate-git-dir', '--template', '--initial-branch', '--shared', '--object-format', '--ref-format'] });
    return [...valuesOf(parsed, '--separate-git-dir'), parsed.operands[0] ?? '.'];
  }
  if (subcommand === 'worktree' && rest[0] === 'add') {
    const path = parseOptions(rest.slice(1), GIT_WORKTREE_ADD).operands[0];
    return path === undefined ? [] : [path];
  }
  if (subcommand === 'restore') return restoresWorkTree(rest) ? parseOptions(rest, GIT_CHECKOUT).operands : [];
  if (subcommand === 'checkout') {
    const dashes = rest.indexOf('--');
    // Before `--`, the first operand is a branch or a file; the ones after it are files.
    if (dashes !== -1) return [...parseOptions(rest.slice(0, dashes), GIT_CHECKOUT).operands.slice(1), ...rest.slice(dashes + 1)];
    return parseOptions(rest, GIT_CHECKOUT).operands.slice(1);
  }
  if (subcommand === 'reset' && rest.includes('--hard')) return ['.'];
  return [];
}

/**
 * `--output` is a diff option (diff, log, show, format-patch, range-diff…), checked on every
 * subcommand since an alias may expand to any of them. `format-patch` without `-o` or
 * `--stdout` writes its patches into the current directory. `git -C dir` moves relative paths.
 */
function gitWrites(args: readonly string[]): string[] {
  let dir: string | undefined;
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    const arg = args[i]!;
    if (!GIT_GLOBAL_VALUES.has(arg)) continue;
    if (arg === '-C' && args[i + 1] !== undefined) dir = within(dir, args[i + 1]!);
    i += 1;
  }
  const subcommand = args[i];
  if (subcommand === undefined) return [];
  const parsed = parseOptions(args.slice(i + 1), {
    shortValues: GIT_SHORT_OUTPUT.has(subcommand) ? 'o' : '',
    longValues: ['--output', '--output-directory'],
    longFlags: ['--stdout'],
  });
  const written = valuesOf(parsed, '--output', '--output-directory', ...(GIT_SHORT_OUTPUT.has(subcommand) ? ['-o'] : []));
  if (subcommand === 'format-patch' && written.length === 0 && !has(parsed, '--stdout')) written.push('.');
  written.push(...gitWorkTreeWrites(subcommand, args.slice(i + 1)));
  return written.map((path) => within(dir, path));
}

const CURL: OptionGrammar = {
  shortValues: 'oDcAbCdeEFHKmPQrtTuUwxXyYz',
  longValues: [
    // Files curl writes…
    '--output', '--output-dir', '--dump-header', '--cookie-jar', '--trace', '--trace-ascii', '--libcurl', '--stderr', '--etag-save', '--hsts', '--alt-svc',
    // …and common options whose value could be mistaken for one.
    '--data', '--data-raw', '--data-binary', '--data-urlencode', '--json', '--form', '--header', '--user', '--user-agent', '--request', '--cookie', '--upload-file', '--url', '--config', '--proxy', '--referer', '--range', '--write-out', '--max-time', '--connect-timeout', '--retry', '--cacert', '--cert', '--key', '--resolve', '--connect-to',
  ],
  longFlags: ['--remote-name', '--remote-name-all'],
};

/** `-o f` (inside `--output-dir`), `-O` into `--output-dir` or the cwd, and curl's other output files. */
function curlWrites(args: readonly string[]): string[] {
  const parsed = parseOptions(args, CURL);
  const outputDir = valuesOf(parsed, '--output-dir').at(-1);
  const written = valuesOf(parsed, '-o', '--output').map((path) => within(outputDir, path));
  if (has(parsed, '-O', '--remote-name', '--remote-name-all')) written.push(outputDir ?? '.');
  written.push(...valuesOf(parsed, '-D', '--dump-header', '-c', '--cookie-jar', '--trace', '--trace-ascii', '--libcurl', '--stderr', '--etag-save', '--hsts', '--alt-svc'));
  return written;
}

const WGET: OptionGrammar = {
  shortValues: 'OPoaeiBtTwQlARDIXUn',
  longValues: [
    '--output-document', '--directory-prefix', '--output-file', '--append-output', '--save-cookies', '--execute',
    '--input-file', '--base', '--tries', '--timeout', '--wait', '--quota', '--level', '--accept', '--reject', '--domains', '--user-agent', '--header', '--user', '--password', '--post-data', '--post-file', '--body-data', '--body-file', '--method', '--load-cookies',
  ],
  longFlags: ['--spider'],
};

/**
 * `-O f`, else every download lands in `-P dir` or the cwd (unless `--spider`); logs
 * (`-o`, `-a`) and saved cookies are files too. `-e` runs a wgetrc command, which can set
 * the same places (`-e output_document=f`, `-e dir_prefix=d`).
 */
function wgetWrites(args: readonly string[]): string[] {
  const parsed = parseOptions(args, WGET);
  const documents = valuesOf(parsed, '-O', '--output-document');
  const prefixes = valuesOf(parsed, '-P', '--directory-prefix');
  const written = valuesOf(parsed, '-o', '--output-file', '-a', '--append-output', '--save-cookies');
  for (const command of valuesOf(parsed, '-e', '--execute')) {
    const setting = /^\s*([\w-]+)\s*=\s*(.*?)\s*$/.exec(command);
    if (!setting) continue;
    const name = setting[1]!.replace(/[-_]/g, '').toLowerCase();
    if (name === 'outputdocument') documents.push(setting[2]!);
    else if (name === 'dirprefix') prefixes.push(setting[2]!);
    else if (name === 'logfile' || name === 'savecookies') written.push(setting[2]!);
  }
  if (documents.length > 0) written.push(...documents);
  else if (!has(parsed, '--spider')) written.push(...(prefixes.length > 0 ? prefixes : ['.']));
  return written;
}

const TAR: OptionGrammar = {
  shortValues: 'fCbFgHIKLNTVX',
  longValues: [
    '--file', '--directory', '--cd', '--index-file',
    '--files-from', '--exclude', '--exclude-from', '--listed-incremental', '--use-compress-program', '--format', '--label', '--newer', '--newer-mtime', '--after-date', '--owner', '--group', '--mode', '--mtime', '--transform', '--xform', '--strip-components', '--to-command', '--blocking-factor', '--record-size', '--tape-length', '--info-script', '--new-volume-script', '--starting-file', '--volno-file', '--rsh-command',
  ],
  longFlags: ['--create', '--append', '--update', '--catenate', '--concatenate', '--delete', '--extract', '--get', '--to-stdout', '--absolute-names'],
};

/**
 * Creating, appending to or deleting from an archive writes the `-f` file; extracting writes
 * into each `-C` / `--directory` (chained, as tar applies them) or the cwd — and anywhere
 * with `-P`, which keeps absolute member names — unless the members go to stdout or a command.
 */
function tarWrites(args: readonly string[]): string[] {
  const options: ParsedOption[] = [];
  let rest = args;
  // Old style (`tar xzf a.tgz -C d`): the first word is a cluster whose values follow in order.
  if (args[0] !== undefined && /^[A-Za-z0-9]+$/.test(args[0])) {
    let next = 1;
    for (const flag of args[0]) options.push({ name: `-${flag}`, value: TAR.shortValues.includes(flag) ? args[next++] : undefined });
    rest = args.slice(next);
  }
  const parsed = parseOptions(rest, TAR);
  parsed.options.unshift(...options);
  const written: string[] = [];
  if (has(parsed, '-c', '-r', '-u', '-A', '--create', '--append', '--update', '--catenate', '--concatenate', '--delete')) {
    written.push(...valuesOf(parsed, '-f', '--file'));
  }
  if (has(parsed, '-x', '--extract', '--get') && !has(parsed, '-O', '--to-stdout', '--to-command')) {
    let dir: string | undefined;
    for (const value of valuesOf(parsed, '-C', '--directory', '--cd')) written.push((dir = within(dir, value)));
    if (dir === undefined) written.push('.');
    if (has(parsed, '-P', '--absolute-names')) written.push('/');
  }
  written.push(...valuesOf(parsed, '--index-file'));
  return written;
}

/**
 * `unzip a.zip [-d dir]` (options may follow the archive; `-ddir` glued) writes into `dir` or
 * the cwd, and with `-:` also outside it (`../` kept). Listing, testing, comments and
 * extraction to stdout (`-l -t -v -z -p -c`, zipinfo `-Z`) write nothing.
 */
function unzipWrites(args: readonly string[]): string[] {
  const dirs: string[] = [];
  let escapes = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('-') || arg.length === 1) continue;
    for (let j = 1; j < arg.length; j++) {
      const flag = arg[j]!;
      if ('lptvzcZ'.includes(flag)) return [];
      if (flag === ':') escapes = true;
      else if (flag === 'd' || flag === 'P') {
        const value = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
        if (flag === 'd' && value !== undefined) dirs.push(value);
        break;
      }
    }
  }
  return [...(dirs.length > 0 ? dirs : ['.']), ...(escapes ? ['/'] : [])];
}

/** The `-t` / `--target-directory` of cp, mv, install and ln. */
const TARGET_DIRECTORY: OptionGrammar = {
  shortValues: 'tS',
  longValues: ['--target-directory', '--suffix', '--sparse', '--no-preserve'],
};

const INSTALL: OptionGrammar = {
  shortValues: 'tgmoS',
  longValues: ['--target-directory', '--group', '--mode', '--owner', '--suffix', '--strip-program'],
  longFlags: ['--directory'],
};

/** `install … -t dir`, `install -d dir…` (every operand is created), else the last operand (`-D` too). */
function installWrites(args: readonly string[]): string[] {
  const parsed = parseOptions(args, INSTALL);
  const targets = valuesOf(parsed, '-t', '--target-directory');
  if (targets.length > 0) return targets;
  if (has(parsed, '-d', '--directory')) return parsed.operands;
  return parsed.operands.length >= 2 ? [parsed.operands.at(-1)!] : [];
}

/**
 * The link written: `-t dir`, the last operand, or with a lone target a link of the same
 * name in the cwd. (A hard link's target is also an alias to guard; the file-command check
 * already treats every `ln` operand as written.)
 */
function lnWrites(args: readonly string[]): string[] {
  const parsed = parseOptions(args, TARGET_DIRECTORY);
  const targets = valuesOf(parsed, '-t', '--target-directory');
  if (targets.length > 0) return targets;
  if (parsed.operands.length === 1) return [basename(parsed.operands[0]!) || '.'];
  return parsed.operands.length >= 2 ? [parsed.operands.at(-1)!] : [];
}

const RSYNC: OptionGrammar = {
  shortValues: 'eBfTM@',
  longValues: [
    '--log-file', '--write-batch', '--only-write-batch', '--backup-dir',
    '--rsh', '--rsync-path', '--filter', '--exclude', '--include', '--exclude-from', '--include-from', '--files-from', '--temp-dir', '--partial-dir', '--suffix', '--log-file-format', '--out-format', '--password-file', '--port', '--timeout', '--contimeout', '--bwlimit', '--compare-dest', '--copy-dest', '--link-dest', '--chmod', '--chown', '--usermap', '--groupmap', '--max-size', '--min-size', '--max-delete', '--modify-window', '--block-size', '--checksum-choice', '--compress-choice', '--compress-level', '--skip-compress', '--read-batch', '--protocol', '--iconv', '--sockopts', '--info', '--debug', '--remote-option', '--address', '--stderr', '--outbuf',
  ],
  longFlags: ['--remove-source-files'],
};

const SCP: OptionGrammar = { shortValues: 'cDFiJloPSX', longValues: [] };

/**
 * The last operand (with two or more) is the destination, unless it is remote: a file on
 * another host is not a local path, so Edit rules cannot speak for it; the Bash rule for
 * rsync or scp decides. Sources are only read, except under `--remove-source-files`.
 */
function copyDestination(parsed: ParsedArgs): string[] {
  if (parsed.operands.length < 2) return [];
  const destination = parsed.operands.at(-1)!;
  return isRemote(destination) ? [] : [destination];
}

function rsyncWrites(args: readonly string[]): string[] {
  const parsed = parseOptions(args, RSYNC);
  const written = copyDestination(parsed);
  written.push(...valuesOf(parsed, '--log-file', '--write-batch', '--only-write-batch'));
  // A relative backup directory lies inside the destination.
  const destination = parsed.operands.length >= 2 ? parsed.operands.at(-1)! : undefined;
  for (const dir of valuesOf(parsed, '--backup-dir')) written.push(destination && !isRemote(destination) ? within(destination, dir) : dir);
  if (has(parsed, '--remove-source-files')) written.push(...parsed.operands.slice(0, -1).filter((source) => !isRemote(source)));
  return written;
}

/**
 * find's `-fprint f`, `-fprint0 f`, `-fls f` and `-fprintf f format` write `f`; `-delete`
 * removes what it finds under the start paths (the words before the expression, or `.`).
 */
function findWrites(args: readonly string[]): string[] {
  const written: string[] = [];
  const starts: string[] = [];
  let inExpression = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!inExpression && (arg.startsWith('-') || arg === '(' || arg === '!')) inExpression = !/^-[HLP]$|^-D$|^-O\d*$/.test(arg);
    if (!inExpression) {
      if (arg === '-D') i += 1;
      else if (!arg.startsWith('-')) starts.push(arg);
      continue;
    }
    if (/^-(fprint|fprint0|fprintf|fls)$/.test(arg) && args[i + 1] !== undefined) written.push(args[++i]!);
    else if (arg === '-delete') written.push(...(starts.length > 0 ? starts : ['.']));
  }
  return written;
}

const WRITERS: ReadonlyMap<string, (args: readonly string[]) => string[]> = new Map([
  ['sort', (args: readonly string[]) => valuesOf(parseOptions(args, SORT), '-o', '--output')],
  ['git', gitWrites],
  ['curl', curlWrites],
  ['wget', wgetWrites],
  ['tar', tarWrites],
  ['bsdtar', tarWrites],
  ['gtar', tarWrites],
  ['unzip', unzipWrites],
  ['dd', (args: readonly string[]) => args.filter((arg) => arg.startsWith('of=')).map((arg) => arg.slice(3))],
  ['install', installWrites],
  ['ln', lnWrites],
  ['cp', (args: readonly string[]) => valuesOf(parseOptions(args, TARGET_DIRECTORY), '-t', '--target-directory')],
  ['mv', (args: readonly string[]) => valuesOf(parseOptions(args, TARGET_DIRECTORY), '-t', '--target-directory')],
  ['rsync', rsyncWrites],
  ['scp', (args: readonly string[]) => copyDestination(parseOptions(args, SCP))],
  ['find', findWrites],
]);

/** Whether `name` is a command that can write files named in its arguments (see `writeTargets`). */
export function hasWriteTargets(name: string): boolean {
  return WRITERS.has(name.toLowerCase());
}

/**
 * What `name args…` writes through options or as its destination (see the top of this file).
 * `name` is the command's basename; it is looked up case-insensitively, as a case-insensitive
 * file system would run `SORT`.
 */
export function writeTargets(name: string, args: readonly string[]): string[] {
  const writer = WRITERS.get(name.toLowerCase());
  return writer ? writer(args).filter((path) => path !== '') : [];
}

/**
 * Paths `name args…` may write, when the words alone cannot tell: `git checkout x` switches
 * to the branch `x` or restores the file `x`. Only deny and ask rules are tested against them,
 * so an ordinary branch switch is not judged as an edit.
 */
export function possibleWriteTargets(name: string, args: readonly string[]): string[] {
  if (name.toLowerCase() !== 'git') return [];
  let dir: string | undefined;
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    if (!GIT_GLOBAL_VALUES.has(args[i]!)) continue;
    if (args[i] === '-C' && args[i + 1] !== undefined) dir = within(dir, args[i + 1]!);
    i += 1;
  }
  if (args[i] !== 'checkout') return [];
  const rest = args.slice(i + 1);
  const dashes = rest.indexOf('--');
  const first = parseOptions(dashes === -1 ? rest : rest.slice(0, dashes), GIT_CHECKOUT).operands[0];
  return first === undefined ? [] : [within(dir, first)];
}
