/**
 * The `tessera` command line, parsed the way Claude Code's is: long flags in camelCase or
 * kebab-case as Claude Code spells them, `--flag value` and `--flag=value`, list flags that take
 * every following word up to the next flag (`--allowedTools Read "Bash(git *)"`), and one
 * positional prompt.
 */

import { randomUUID } from 'node:crypto';
import { parsePermissionMode, PERMISSION_MODES, type PermissionMode } from '@tessera/contracts';

export type OutputFormat = 'text' | 'json' | 'stream-json';
export type InputFormat = 'text' | 'stream-json';

export interface CliFlags {
  print: boolean;
  outputFormat: OutputFormat;
  inputFormat: InputFormat;
  verbose: boolean;
  includePartialMessages: boolean;
  replayUserMessages: boolean;
  continue: boolean;
  /** `-r` with no id: `true` (pick the most recent, as `-c`); with one: the id or name. */
  resume?: string | true;
  forkSession: boolean;
  sessionId?: string;
  model?: string;
  fallbackModel?: string;
  permissionMode?: string;
  dangerouslySkipPermissions: boolean;
  /** Lets Shift+Tab cycle into bypassPermissions in the interactive UI. */
  allowDangerouslySkipPermissions: boolean;
  allowedTools: string[];
  disallowedTools: string[];
  tools?: string[];
  systemPrompt?: string;
  systemPromptFile?: string;
  appendSystemPrompt?: string;
  appendSystemPromptFile?: string;
  maxTurns?: number;
  /** `--max-budget-usd`: print mode stops once the run has cost this much (USD). */
  maxBudgetUsd?: number;
  mcpConfig: string[];
  /** `--agents '<json>'` values as given (each occurrence one JSON text; see `parseAgentsFlag`). */
  agents: string[];
  /** `--json-schema '<schema>'`: print mode's final answer must be JSON conforming to it (`structured_output`). */
  jsonSchema?: string;
  /** `--plugin-dir`: bundle plugin folders loaded as they are, for this run. */
  pluginDir: string[];
  strictMcpConfig: boolean;
  settings?: string;
  settingSources?: string[];
  addDir: string[];
  cwd?: string;
  provider?: string;
  sessionPersistence: boolean;
  permissionPromptTool?: string;
  version: boolean;
  help: boolean;
  /** What is left: the prompt words (joined by the caller). */
  positionals: string[];
}

type Kind = 'boolean' | 'string' | 'optional' | 'list' | 'number' | 'amount' | 'negated' | 'values' | 'repeat';

interface FlagSpec {
  key: keyof CliFlags;
  kind: Kind;
  names: readonly string[];
  values?: readonly string[];
}

const FLAGS: readonly FlagSpec[] = [
  { key: 'print', kind: 'boolean', names: ['-p', '--print'] },
  { key: 'outputFormat', kind: 'string', names: ['--output-format'], values: ['text', 'json', 'stream-json'] },
  { key: 'inputFormat', kind: 'string', names: ['--input-format'], values: ['text', 'stream-json'] },
  { key: 'verbose', kind: 'boolean', names: ['--verbose'] },
  { key: 'includePartialMessages', kind: 'boolean', names: ['--include-partial-messages'] },
  { key: 'replayUserMessages', kind: 'boolean', names: ['--replay-user-messages'] },
  { key: 'continue', kind: 'boolean', names: ['-c', '--continue'] },
  { key: 'resume', kind: 'optional', names: ['-r', '--resume'] },
  { key: 'forkSession', kind: 'boolean', names: ['--fork-session'] },
  { key: 'sessionId', kind: 'string', names: ['--session-id'] },
  { key: 'model', kind: 'string', names: ['--model'] },
  { key: 'fallbackModel', kind: 'string', names: ['--fallback-model'] },
  { key: 'permissionMode', kind: 'string', names: ['--permission-mode'] },
  { key: 'dangerouslySkipPermissions', kind: 'boolean', names: ['--dangerously-skip-permissions'] },
  { key: 'allowDangerouslySkipPermissions', kind: 'boolean', names: ['--allow-dangerously-skip-permissions'] },
  { key: 'allowedTools', kind: 'list', names: ['--allowedTools', '--allowed-tools'] },
  { key: 'disallowedTools', kind: 'list', names: ['--disallowedTools', '--disallowed-tools'] },
  { key: 'tools', kind: 'list', names: ['--tools'] },
  { key: 'systemPrompt', kind: 'string', names: ['--system-prompt'] },
  { key: 'systemPromptFile', kind: 'string', names: ['--system-prompt-file'] },
  { key: 'appendSystemPrompt', kind: 'string', names: ['--append-system-prompt'] },
  { key: 'appendSystemPromptFile', kind: 'string', names: ['--append-system-prompt-file'] },
  { key: 'maxTurns', kind: 'number', names: ['--max-turns'] },
  { key: 'maxBudgetUsd', kind: 'amount', names: ['--max-budget-usd'] },
  { key: 'mcpConfig', kind: 'values', names: ['--mcp-config'] },
  { key: 'pluginDir', kind: 'values', names: ['--plugin-dir'] },
  { key: 'agents', kind: 'repeat', names: ['--agents'] },
  { key: 'jsonSchema', kind: 'string', names: ['--json-schema'] },
  { key: 'strictMcpConfig', kind: 'boolean', names: ['--strict-mcp-config'] },
  { key: 'settings', kind: 'string', names: ['--settings'] },
  { key: 'settingSources', kind: 'list', names: ['--setting-sources'] },
  { key: 'addDir', kind: 'list', names: ['--add-dir'] },
  { key: 'cwd', kind: 'string', names: ['--cwd'] },
  { key: 'provider', kind: 'string', names: ['--provider'] },
  { key: 'sessionPersistence', kind: 'negated', names: ['--no-session-persistence'] },
  { key: 'permissionPromptTool', kind: 'string', names: ['--permission-prompt-tool'] },
  { key: 'version', kind: 'boolean', names: ['-v', '--version'] },
  { key: 'help', kind: 'boolean', names: ['-h', '--help'] },
];

const BY_NAME = new Map<string, FlagSpec>(FLAGS.flatMap((spec) => spec.names.map((name) => [name, spec] as const)));

/** Flags Claude Code has that Tessera accepts and ignores (they change nothing here), with why. */
const IGNORED = new Map<string, 'boolean' | 'string'>([
  ['--ide', 'boolean'],
  ['--debug', 'boolean'],
  ['--mcp-debug', 'boolean'],
  ['--include-hook-events', 'boolean'],
  ['--forward-subagent-text', 'boolean'],
  ['--bare', 'boolean'],
  ['--output-style', 'string'],
  ['--max-thinking-tokens', 'string'],
  ['--effort', 'string'],
]);

export class CliUsageError extends Error {
  readonly exitCode = 1;
}

/** `--session-id` takes a UUID, as Claude Code's. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `--session-id` as Claude Code checks it in every mode: a UUID, and with `-c`/`-r` only
 * together with `--fork-session`. (One already stored is refused once the store is open:
 * `refuseSessionIdInUse`.)
 */
export function checkSessionIdFlags(flags: CliFlags): void {
  if (flags.sessionId !== undefined && !UUID.test(flags.sessionId)) {
    throw new CliUsageError(`Error: --session-id "${flags.sessionId}" is not a valid UUID; pass one such as ${randomUUID()}, or leave the flag out for a new session.`);
  }
  if (flags.sessionId !== undefined && (flags.continue || flags.resume !== undefined) && !flags.forkSession) {
    throw new CliUsageError('Error: --session-id can only be used with --continue or --resume if --fork-session is also specified.');
  }
}

export function defaultFlags(): CliFlags {
  return {
    print: false,
    outputFormat: 'text',
    inputFormat: 'text',
    verbose: false,
    includePartialMessages: false,
    replayUserMessages: false,
    continue: false,
    forkSession: false,
    dangerouslySkipPermissions: false,
    allowDangerouslySkipPermissions: false,
    allowedTools: [],
    disallowedTools: [],
    mcpConfig: [],
    agents: [],
    pluginDir: [],
    strictMcpConfig: false,
    addDir: [],
    sessionPersistence: true,
    version: false,
    help: false,
    positionals: [],
  };
}

/** A list flag's words: each may itself hold several entries, split on commas and spaces outside parentheses. */
export function splitToolList(word: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of word) {
    if (char === '(') depth += 1;
    else if (char === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === ',' || char === ' ')) {
      if (current.trim() !== '') out.push(current.trim());
      current = '';
      continue;
    }
    current += char;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

/** Whether these arguments ask for headless stream-json input (the Agent SDK's mode). */
export function wantsStreamInput(argv: readonly string[]): boolean {
  return argv.some((arg, index) => arg === '--input-format=stream-json' || (arg === '--input-format' && argv[index + 1] === 'stream-json'));
}

/** Parses the main command's arguments. Throws `CliUsageError` for an unknown flag or a bad value. */
export function parseArgs(given: readonly string[], options: { ignoreUnknown?: boolean; onUnknown?: (flag: string) => void } = {}): CliFlags {
  const flags = defaultFlags();
  const record = flags as unknown as Record<string, unknown>;
  // A copy: a group of short flags (`-pc`) is replaced in it by its flags.
  const argv = [...given];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (arg === '--') {
      flags.positionals.push(...argv.slice(index + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      flags.positionals.push(arg);
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const spec = BY_NAME.get(name);
    const group = spec === undefined ? shortGroup(arg) : undefined;
    if (group) {
      argv.splice(index, 1, ...group);
      index -= 1;
      continue;
    }
    if (!spec) {
      const ignored = IGNORED.get(name);
      if (ignored === 'string' && inline === undefined) index += 1;
      if (ignored) continue;
      // The Agent SDK passes flags of newer Claude Code versions; a headless host gets a warning, not a failure.
      if (options.ignoreUnknown && name.startsWith('--')) {
        options.onUnknown?.(name);
        continue;
      }
      throw new CliUsageError(`error: unknown option '${name}'${suggest(name)}\nRun tessera --help for the options.`);
    }
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      // As Commander's required option arguments: the next word is the value even when it starts
      // with "-" (`--append-system-prompt "- be terse"`).
      const next = argv[index + 1];
      if (next === undefined) throw new CliUsageError(`error: option '${spec.names.at(-1)} <value>' argument missing`);
      index += 1;
      return next;
    };
    switch (spec.kind) {
      case 'boolean':
        record[spec.key] = true;
        break;
      case 'negated':
        record[spec.key] = false;
        break;
      case 'string': {
        const value = takeValue();
        if (spec.values && !spec.values.includes(value)) {
          throw new CliUsageError(`error: option '${spec.names.at(-1)} <value>' argument '${value}' is invalid. Allowed choices are ${spec.values.join(', ')}.`);
        }
        if (spec.key === 'permissionMode') checkPermissionMode(value);
        record[spec.key] = value;
        break;
      }
      case 'number': {
        const value = takeValue();
        const number = Number(value);
        if (!Number.isInteger(number) || number < 0) throw new CliUsageError(`error: option '${spec.names.at(-1)} <n>' expects a whole number ≥ 0, got '${value}'`);
        record[spec.key] = number;
        break;
      }
      case 'amount': {
        const value = takeValue();
        const amount = Number(value);
        if (value.trim() === '' || !Number.isFinite(amount) || amount <= 0) throw new CliUsageError(`error: option '${spec.names.at(-1)} <amount>' expects an amount in US dollars greater than 0 (e.g. 0.50), got '${value}'`);
        record[spec.key] = amount;
        break;
      }
      case 'repeat':
        // One value per occurrence, kept whole (a JSON text); the prompt after it stays a positional.
        (record[spec.key] as string[]).push(takeValue());
        break;
      case 'optional': {
        if (inline !== undefined) record[spec.key] = inline;
        else {
          const next = argv[index + 1];
          if (next !== undefined && !next.startsWith('-') && looksLikeSessionRef(next)) {
            record[spec.key] = next;
            index += 1;
          } else record[spec.key] = true;
        }
        break;
      }
      case 'list':
      case 'values': {
        // `list`: tool rules, split on commas and spaces; `values`: each argument whole (JSON, paths).
        const split = spec.kind === 'list' ? splitToolList : (value: string) => [value];
        const list = record[spec.key] as string[] | undefined;
        const target = list ?? [];
        if (inline !== undefined) target.push(...split(inline));
        else {
          let taken = 0;
          while (index + 1 < argv.length && !argv[index + 1]!.startsWith('-')) {
            index += 1;
            taken += 1;
            target.push(...split(argv[index]!));
          }
          if (taken === 0) throw new CliUsageError(`error: option '${spec.names[0]} <values...>' argument missing`);
        }
        record[spec.key] = target;
        break;
      }
    }
  }
  return flags;
}

/** The `--permission-mode` values: Tessera's modes, with Claude Code's `manual` (= `default`) after `default`. */
const PERMISSION_MODE_CHOICES = PERMISSION_MODES.flatMap((mode) => (mode === 'default' ? [mode, 'manual'] : [mode]));

/**
 * `--permission-mode` as the mode it names (`manual` is `default`), or a `CliUsageError` listing
 * the choices. `parseArgs` checks the flag with it, so every command that parses the main flags
 * (print, interactive, `acp`, `mcp serve`) refuses the same values; `loadCliSettings` checks it
 * again where the flag is used, for `CliFlags` an embedder builds without `parseArgs`. Claude
 * Code's `auto` (a model classifier approves tool calls) gets its own message: it is a real mode
 * Tessera lacks.
 */
export function checkPermissionMode(value: string): PermissionMode {
  const mode = parsePermissionMode(value);
  if (mode !== undefined) return mode;
  if (value === 'auto') {
    throw new CliUsageError(`error: --permission-mode auto (Claude Code's classifier mode) is not supported by Tessera. Use one of ${PERMISSION_MODE_CHOICES.join(', ')}.`);
  }
  throw new CliUsageError(`error: option '--permission-mode <mode>' argument '${value}' is invalid. Allowed choices are ${PERMISSION_MODE_CHOICES.join(', ')}.`);
}

/**
 * Combined short flags, as Commander reads them: `-pc` is `-p -c`. The group's letters up to
 * the first one that takes a value are boolean flags; that one gets the rest of the group as
 * its value (`-r<id>`), or the next word as usual. An unknown letter is reported by its name
 * (`-x`); a word that is not a group is left alone.
 */
function shortGroup(arg: string): string[] | undefined {
  if (!/^-[A-Za-z]{2,}$/.test(arg) || BY_NAME.get(arg.slice(0, 2)) === undefined) return undefined;
  const out: string[] = [];
  for (let at = 1; at < arg.length; at += 1) {
    const name = `-${arg[at]}`;
    const spec = BY_NAME.get(name);
    if (spec === undefined) throw new CliUsageError(`error: unknown option '${name}' (in '${arg}')\nRun tessera --help for the options.`);
    out.push(name);
    if (spec.kind !== 'boolean') {
      if (at + 1 < arg.length) out.push(arg.slice(at + 1));
      break;
    }
  }
  return out;
}

/**
 * `-r` takes an id only when the next word looks like one (a UUID, an id-like token, or a name
 * without spaces); `tessera -r "fix the tests"` resumes the latest session with that prompt.
 */
function looksLikeSessionRef(word: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(word);
}

function suggest(name: string): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const known of BY_NAME.keys()) {
    const distance = editDistance(name.toLowerCase(), known.toLowerCase());
    if (distance < bestDistance) {
      best = known;
      bestDistance = distance;
    }
  }
  return best === undefined ? '' : ` (Did you mean ${best}?)`;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

export const USAGE = `Usage: tessera [options] [command] [prompt]

Tessera: an AI coding agent composed of plugins. Starts an interactive session by default;
use -p/--print for non-interactive output.

Arguments:
  prompt                              Your prompt

Options:
  -p, --print                         Print the response and exit (reads the prompt from stdin when piped)
  --output-format <format>            text (default), json (one result object), stream-json (one JSON object per line)
  --input-format <format>             text (default) or stream-json (user messages and control requests on stdin)
  --verbose                           Needed with --output-format stream-json; with json, prints every message
  --include-partial-messages          stream_event lines as the model streams (stream-json only)
  --replay-user-messages              Echo stream-json user messages back on stdout
  -c, --continue                      Continue the most recent conversation in this directory
  -r, --resume [id]                   Resume a conversation by id or name (the most recent without one)
  --fork-session                      With --resume/--continue: continue under a new session id
  --session-id <uuid>                 Use this session id
  --model <model>                     Model for this session (an alias such as sonnet, or a full id)
  --fallback-model <model>            Model to switch to when the main one is overloaded
  --permission-mode <mode>            default (or manual), acceptEdits, plan, bypassPermissions, dontAsk (not auto)
  --dangerously-skip-permissions      Same as --permission-mode bypassPermissions (deny rules still apply)
  --allowedTools <tools...>           Rules that run without asking, e.g. "Bash(git diff *)" Read
  --disallowedTools <tools...>        Rules that are refused; a bare tool name removes the tool
  --tools <tools...>                  Only these built-in tools ("" for none, "default" for all)
  --system-prompt <text>              Replace the system prompt (--system-prompt-file <path> reads it)
  --append-system-prompt <text>       Append to the system prompt (--append-system-prompt-file <path>)
  --max-turns <n>                     Stop after n model turns (print mode)
  --max-budget-usd <amount>           Stop once the run has cost this many US dollars (print mode)
  --mcp-config <files...>             MCP servers from JSON files or strings
  --agents <json>                     Subagents for this run: '{"name":{"description":"…","prompt":"…","tools":[…],"model":"…"}}'
  --json-schema <schema>              The final answer as JSON conforming to this JSON Schema (print mode: structured_output)
  --plugin-dir <paths...>             Load bundle plugins from these folders for this run
  --settings <file|json>              One more settings layer, on top of the others
  --setting-sources <sources>         Only these sources' settings, CLAUDE.md, skills and agents: user,project,local ("" for none)
  --add-dir <dirs...>                 More directories the tools may use
  --cwd <dir>                         Work in this directory
  --provider <profile>                Use this provider profile from settings ("demo": the built-in demo model)
  --no-session-persistence            Do not save this session
  --permission-prompt-tool <tool>     Who answers permission asks in print mode ("stdio": the stream-json host)
  -v, --version                       Print the version
  -h, --help                          Show this help

Commands:
  sessions list|show|export|rm        Stored conversations
  config get|set|list                 Settings
  provider add|list|use               Provider profiles
  history search <text>               Search your prompt history
  doctor                              Check the setup: composition, settings, provider, context files
  plugin marketplace|install|list|…   Claude Code bundle plugins and marketplaces
  serve [--port n] [--root dir]       Serve sessions over HTTP (SSE UI message stream, WebSocket, OpenAPI)
  mcp serve                           Serve this agent as an MCP server over stdio (Claude Code .mcp.json)
  acp                                 Run as an Agent Client Protocol agent on stdio (Zed and other editors)
  worker [--redis url] [--queue name] Run background tasks from a Redis queue (BullMQ)

Examples:
  tessera -p "explain this repository"
  tessera -c -p "now add a test for it"
  tessera -p "list the TODOs" --output-format stream-json --verbose | jq -c 'select(.type=="result")'
`;
