import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { describeError, TesseraError, type Diagnostic } from '@tessera/contracts';
import {
  loadConfig,
  mergeSettings,
  readSettingsLayer,
  SettingsPolicyError,
  settingsSchema,
  type LoadedConfig,
  type Settings,
  type SettingsLayer,
} from '@tessera/plugin-config/settings';
import type { CliIO, Subcommand } from '../io.js';

/**
 * A failure the command reports itself: the message goes to stderr as it is, `exitCode` is
 * 1 (the operation failed) or 2 (the command line was wrong; a usage line follows).
 */
export class CommandError extends TesseraError {
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2 = 1, details?: Record<string, unknown>) {
    super(message, {
      code: exitCode === 2 ? 'cli_usage' : 'cli_command_failed',
      category: exitCode === 2 ? 'validation' : 'state',
      recoverable: true,
      ...(details === undefined ? {} : { details }),
    });
    this.exitCode = exitCode;
  }
}

/** A wrong command line: exit 2 with the action's usage line. */
export function usageError(message: string): CommandError {
  return new CommandError(message, 2);
}

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/**
 * Resolves on the first SIGINT or SIGTERM (a long-running command's cue to stop cleanly); a stdio
 * server (`acp`, `mcp serve`) also stops when its client goes (`closed`) or stops reading stdout
 * (`stdoutClosed`, an EPIPE: no answer can reach it any more). Says which came first; the caller
 * then saves and exits.
 */
export async function untilStopped(closed?: Promise<void>, stdoutClosed?: AbortSignal): Promise<'signal' | 'closed' | 'stdout-closed'> {
  let stop: (why: 'signal' | 'stdout-closed') => void = () => undefined;
  const stopped = new Promise<'signal' | 'stdout-closed'>((resolve) => (stop = resolve));
  const onSignal = (): void => stop('signal');
  const onStdoutClosed = (): void => stop('stdout-closed');
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  if (stdoutClosed?.aborted) onStdoutClosed();
  else stdoutClosed?.addEventListener('abort', onStdoutClosed, { once: true });
  try {
    return await (closed === undefined ? stopped : Promise.race([closed.then(() => 'closed' as const), stopped]));
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    stdoutClosed?.removeEventListener('abort', onStdoutClosed);
  }
}

/** Parsed flags of a command without positionals. */
export type CommandFlags = Record<string, string | boolean | Array<string | boolean> | undefined>;

/**
 * Flags of a command that takes no positionals (`tessera serve`, `tessera worker`): the values,
 * or the exit code once `--help` printed the usage (0) or a bad flag its error and the usage (2).
 */
export function parseCommandFlags(argv: readonly string[], options: OptionSpecs, usage: string, io: CliIO): CommandFlags | number {
  let values: CommandFlags;
  try {
    values = parseArgs({ args: [...argv], options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: false }).values;
  } catch (error) {
    io.stderr(`${describeError(error)}\n${usage}`);
    return 2;
  }
  if (values.help) {
    io.stdout(usage);
    return 0;
  }
  return values;
}

export interface ParsedArguments {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** One action of a command group (`list`, `show`, …); its help text comes from these fields. */
export interface CommandAction {
  /** What follows `tessera <group>`, e.g. `list [--all] [--json]`. */
  usage: string;
  summary: string;
  options?: OptionSpecs;
  run(args: ParsedArguments, io: CliIO): Promise<number>;
}

const HELP_FLAGS = new Set(['-h', '--help']);

/**
 * `tessera <group> <action> …` as a `Subcommand`: picks the action, answers `--help` from the
 * action's declarations, parses options strictly, and turns thrown errors into a message on
 * stderr and an exit code (`CommandError` says which; anything else is 1).
 */
export function commandGroup(group: string, description: string, actions: Readonly<Record<string, CommandAction>>): Subcommand {
  const help = [
    `${description}`,
    '',
    'Usage:',
    ...Object.values(actions).map((action) => `  tessera ${group} ${action.usage}\n      ${action.summary}`),
    '',
    `Every action accepts -h, --help.`,
    '',
  ].join('\n');
  const summaryLine = `usage: tessera ${group} <${Object.keys(actions).join('|')}> … (see tessera ${group} --help)`;

  return async (argv, io) => {
    const [name, ...rest] = argv;
    if (name === undefined || name === '') {
      io.stderr(`tessera ${group}: missing action\n${summaryLine}\n`);
      return 2;
    }
    if (HELP_FLAGS.has(name) || name === 'help') {
      io.stdout(help);
      return 0;
    }
    const action = Object.hasOwn(actions, name) ? actions[name] : undefined;
    if (action === undefined) {
      io.stderr(`tessera ${group}: unknown action ${JSON.stringify(name)}\n${summaryLine}\n`);
      return 2;
    }
    const end = rest.indexOf('--');
    if ((end === -1 ? rest : rest.slice(0, end)).some((arg) => HELP_FLAGS.has(arg))) {
      io.stdout(`Usage: tessera ${group} ${action.usage}\n\n${action.summary}\n`);
      return 0;
    }
    const prefix = `tessera ${group} ${name}`;
    try {
      return await action.run(parseActionArguments(rest, action.options ?? {}), io);
    } catch (error) {
      if (error instanceof CommandError) {
        io.stderr(`${prefix}: ${error.message}\n`);
        if (error.exitCode === 2) io.stderr(`usage: tessera ${group} ${action.usage}\n`);
        return error.exitCode;
      }
      io.stderr(`${prefix}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  };
}

function parseActionArguments(args: string[], options: OptionSpecs): ParsedArguments {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as ParsedArguments['values'], positionals };
  } catch (error) {
    // Node's messages go on about `--`; the first sentence names the option.
    const message = error instanceof Error ? error.message : String(error);
    throw usageError((message.split(/\.\s/)[0] ?? message).replace(/\.$/, ''));
  }
}

/** Exactly `names.length` positionals, or a usage error naming the first one missing. */
export function positionals(args: ParsedArguments, names: readonly string[]): string[] {
  if (args.positionals.length < names.length) throw usageError(`missing ${names[args.positionals.length]}`);
  if (args.positionals.length > names.length) throw usageError(`unexpected argument ${JSON.stringify(args.positionals[names.length])}`);
  return args.positionals;
}

/** At most one of `flags` is set; returns it, or undefined. */
export function oneOf<T extends string>(args: ParsedArguments, flags: readonly T[]): T | undefined {
  const set = flags.filter((flag) => args.values[flag] === true);
  if (set.length > 1) throw usageError(`${set.map((flag) => `--${flag}`).join(' and ')} cannot be combined`);
  return set[0];
}

export function warn(io: CliIO, message: string): void {
  io.stderr(`warning: ${message}\n`);
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Local time as `YYYY-MM-DD HH:MM`; `-` for an invalid date. */
export function formatTime(value: Date | number | string): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '-';
  const pad = (part: number) => String(part).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** Whitespace collapsed to single spaces, cut to `max` characters with `…`. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** `~/…` for paths under `home` (display only). */
export function tildify(path: string, home: string): string {
  return home !== '' && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
}

/** A path as users read it: relative inside the project, `~/…` under the home directory. */
export function displayPath(path: string, io: CliIO): string {
  if (io.cwd !== '' && path.startsWith(`${io.cwd}/`)) return path.slice(io.cwd.length + 1);
  return tildify(path, io.home);
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

// ------------------------------------------------------------------ settings files

export type SettingsScope = 'global' | 'project' | 'local';

/** The file `--global` / `--project` / `--local` write: Tessera's own files, never `.claude/`. */
export function settingsFileFor(scope: SettingsScope, io: CliIO): string {
  if (scope === 'global') return join(io.home, '.tessera', 'settings.json');
  return join(io.cwd, '.tessera', scope === 'local' ? 'settings.local.json' : 'settings.json');
}

/** What the settings layers say, with `$ENV:` references left as written (never the secrets). */
export interface SettingsView {
  /** Lowest precedence first, as `loadConfig` considered them. */
  layers: SettingsLayer[];
  merged: Settings;
  diagnostics: Diagnostic[];
}

export function loadSettingsView(io: CliIO): SettingsView {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig({ cwd: io.cwd, home: io.home, env: io.env });
  } catch (error) {
    if (error instanceof SettingsPolicyError) throw new CommandError(error.message);
    throw error;
  }
  // loadConfig's `config` has provider keys substituted; merge again to show the references.
  const merged = mergeSettings(loaded.layers.flatMap((layer) => (layer.settings ? [layer.settings] : [])));
  return { layers: loaded.layers, merged, diagnostics: loaded.diagnostics };
}

/** `file:line:column: message` for a diagnostic with a position, else `file: message`. */
export function locate(diagnostic: Diagnostic): string {
  const where = diagnostic.line === undefined ? diagnostic.file : `${diagnostic.file}:${diagnostic.line}:${diagnostic.column ?? 1}`;
  return `${where}: ${diagnostic.message}`;
}

/**
 * Reports the layers' diagnostics on stderr (infos are left out). A file that is not JSON
 * makes the command fail: what it shows would silently lack that file.
 */
export function reportSettingsDiagnostics(io: CliIO, view: SettingsView): void {
  const broken = view.diagnostics.filter((diagnostic) => diagnostic.severity === 'error' && diagnostic.line !== undefined);
  for (const diagnostic of view.diagnostics) {
    if (diagnostic.severity === 'warning' || (diagnostic.severity === 'error' && !broken.includes(diagnostic))) warn(io, locate(diagnostic));
  }
  if (broken.length > 0) throw new CommandError(`${broken.map(locate).join('\n')}\nFix the file (or move it away) and run the command again.`);
}

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

/** `permissions.defaultMode` → `['permissions', 'defaultMode']`, refusing empty and prototype segments. */
export function parseKeyPath(key: string): string[] {
  const segments = key.split('.');
  const bad = segments.find((segment) => segment === '' || FORBIDDEN_SEGMENTS.has(segment));
  if (bad !== undefined) throw new CommandError(`invalid key ${JSON.stringify(key)}: use dotted names such as "model" or "permissions.defaultMode"`);
  return segments;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value at `path` (own properties only), or undefined. */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const segment of path) {
    if (!isPlainObject(current) || !Object.hasOwn(current, segment)) return undefined;
    current = current[segment];
  }
  return current;
}

/** The settings object of one file, for editing. Missing or blank → `{}`; broken → located error. */
export function readSettingsForEdit(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new CommandError(`cannot read ${file} (${code ?? String(error)}); fix its permissions. Nothing was written.`);
  }
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CommandError(`${jsonErrorLocation(file)}\nFix the JSON first; nothing was written.`);
  }
  if (!isPlainObject(value)) throw new CommandError(`${file}:1:1: a settings file must contain a JSON object ({ … }); nothing was written.`);
  return value;
}

/** The config plugin's located syntax error for a file `JSON.parse` refused. */
function jsonErrorLocation(file: string): string {
  let diagnostics: readonly Diagnostic[];
  try {
    diagnostics = readSettingsLayer(file, 'project').diagnostics;
  } catch (error) {
    diagnostics = error instanceof SettingsPolicyError ? error.diagnostics : [];
  }
  const located = diagnostics.find((diagnostic) => diagnostic.severity === 'error' && diagnostic.line !== undefined);
  return located ? locate(located) : `${file}: invalid JSON`;
}

/** One change to a settings file: `path` (dotted key as segments) gets `value`. */
export interface SettingEdit {
  path: readonly string[];
  value: unknown;
}

/**
 * Applies `edits` to `file` (other keys kept, 2-space JSON) after checking the whole result
 * against the settings schema. A problem at an edited key fails with the key and the expected
 * type, and nothing is written; problems elsewhere were there before and are returned as
 * warnings. The write is atomic (temp file + rename) and keeps the file's mode.
 */
export function writeSettings(file: string, edits: readonly SettingEdit[]): string[] {
  const after = structuredClone(readSettingsForEdit(file));
  for (const { path, value } of edits) setAt(after, path, value, file);
  const checked = settingsSchema.safeParse(after);
  const warnings: string[] = [];
  if (!checked.success) {
    for (const issue of checked.error.issues) {
      const issuePath = issue.path.map(String);
      const where = issuePath.join('.') || '(root)';
      const edit = edits.find(({ path }) => {
        const shared = Math.min(issuePath.length, path.length);
        return issuePath.slice(0, shared).join('\0') === path.slice(0, shared).join('\0');
      });
      if (edit !== undefined) {
        throw new CommandError(`invalid value for ${edit.path.join('.')} (at ${where}): ${issue.message}. Nothing was written to ${file}.`, 1, { file, field: where });
      }
      warnings.push(`${file}: ${where} is already invalid (${issue.message}); Tessera ignores it until it is fixed`);
    }
  }
  writeFileAtomic(file, `${JSON.stringify(after, null, 2)}\n`);
  return warnings;
}

function setAt(root: Record<string, unknown>, path: readonly string[], value: unknown, file: string): void {
  let parent = root;
  for (const [index, segment] of path.slice(0, -1).entries()) {
    const next = Object.hasOwn(parent, segment) ? parent[segment] : undefined;
    if (next === undefined) parent[segment] = {};
    else if (!isPlainObject(next)) {
      const at = path.slice(0, index + 1).join('.');
      throw new CommandError(`cannot set ${path.join('.')}: ${at} in ${file} is ${JSON.stringify(next)}, not an object. Set ${at} itself instead. Nothing was written.`);
    }
    parent = parent[segment] as Record<string, unknown>;
  }
  parent[path[path.length - 1] as string] = value;
}

/** Writes through a temp file in the same directory and a rename; a symlink is followed, not replaced. */
export function writeFileAtomic(file: string, text: string): void {
  let target = file;
  let mode: number | undefined;
  try {
    target = realpathSync(file);
    mode = statSync(target).mode & 0o777;
  } catch {
    // A new file.
  }
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    mkdirSync(dirname(target), { recursive: true });
    const descriptor = openSync(temp, 'wx', mode ?? 0o644);
    try {
      writeSync(descriptor, text);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    if (mode !== undefined) chmodSync(temp, mode);
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new CommandError(`cannot write ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); check the directory's permissions.`);
  }
}

/**
 * After writing `path` to `file`: the layer that now decides its value, when it is another
 * (higher) file, as a note for the user; undefined when `file` wins.
 */
export function overriddenBy(io: CliIO, file: string, path: readonly string[], scopes?: ReadonlySet<string>): string | undefined {
  let view: SettingsView;
  try {
    view = loadSettingsView(io);
  } catch {
    return undefined;
  }
  const deciding = [...view.layers].reverse().find((layer) => (scopes === undefined || scopes.has(layer.scope)) && valueAt(layer.settings, path) !== undefined);
  if (deciding === undefined || deciding.file === file) return undefined;
  return `${deciding.file} also sets ${path.join('.')} and takes precedence over ${file}`;
}
