import { statSync } from 'node:fs';
import {
  Provider,
  SandboxPaths,
  ShellDirectories,
  SubagentLauncher,
  TesseraError,
  describeError,
  messageText,
  type CallbackHookHandler,
  type HookEventName,
  type HookHandlerConfig,
  type HooksConfig,
  type HooksSource,
  type ISession,
  type SessionServices,
  type Token,
  type ToolPermission,
} from '@tessera/contracts';
import { hostPathFor } from '@tessera/permission-rules';
import { MAX_TIMEOUT_MS, runCommandHook, type ProcessOutcome } from './command-executor.js';
import { combineOutcomes, interpretOutcome, type HandlerOutcome, type HookRunResult } from './hook-outcome.js';
import { runHttpHook } from './http-executor.js';
import { matchesIfCondition } from './if-condition.js';
import { matchesMatcher } from './matcher.js';
import { HOOK_EVENTS, handlerKey } from './parse-hooks-config.js';

/** One handler with where it came from. */
export interface HookEntry {
  event: HookEventName;
  matcher?: string;
  handler: HookHandlerConfig;
  source: HooksSource;
  /** `hooks.Stop[0].hooks[1]`, for messages. */
  location: string;
}

export interface AgentHookRequest {
  handler: HookHandlerConfig & { type: 'agent' };
  prompt: string;
  input: Record<string, unknown>;
  session: ISession | undefined;
  signal: AbortSignal;
}

export interface HookRunnerOptions {
  /** `CLAUDE_PROJECT_DIR`; default: the session's cwd. */
  projectDir?: string;
  /** Used by `prompt` hooks; default: the call's `Provider` (see `services`). */
  provider?: Provider;
  /** Runs `agent` hooks; overrides `subagentLauncher`. */
  runAgentHook?: (request: AgentHookRequest) => Promise<{ ok: boolean; reason?: string }>;
  /**
   * Runs `agent` hooks as subagents; default: the call's `SubagentLauncher` (the subagents
   * plugin binds it). With neither a launcher nor `runAgentHook`, an agent hook reports a
   * configuration error.
   */
  subagentLauncher?: SubagentLauncher;
  /**
   * Where each session's shell is after a `cd`; default: the call's `ShellDirectories` (bound
   * by the built-in tools). Claude Code's hook input `cwd`, and the directory command hooks run
   * in, follow the shell; without it they are the session's cwd.
   */
  shellDirectories?: ShellDirectories;
  /** Under a sandbox, maps the shell's sandbox directory back to the host; default: the call's `SandboxPaths`. */
  sandboxPaths?: SandboxPaths;
  /**
   * Where a call looks up what the options above leave out (`Provider`, `SubagentLauncher`,
   * `ShellDirectories`, `SandboxPaths`), per call. Default: the session's `services`; a call
   * without a session finds nothing.
   */
  services?: (session: ISession | undefined) => SessionServices | undefined;
  /** `transcript_path` sent to hooks. */
  transcriptPath?: (session: ISession | undefined) => string;
  /** Extra environment for command hooks. */
  env?: Record<string, string>;
}

export interface HookCall {
  event: HookEventName;
  /** The value the matcher is tested against (tool name, source, reason, trigger, agent type…). */
  matchValue?: string;
  /** Event-specific input fields (snake_case, as Claude Code sends them). */
  fields: Record<string, unknown>;
  session?: ISession;
  signal?: AbortSignal;
  /** Tool events: for `if` conditions. */
  /** The tool call a tool event is about; `permission` lets an `if` rule judge an MCP tool by its family. */
  tool?: { name: string; input: unknown; permission?: ToolPermission };
}

const VERDICT_INSTRUCTION = 'Reply with only a JSON object: {"ok": true} to let the action proceed, or {"ok": false, "reason": "why"} to block it.';

/** The `{ ok, reason }` object in a model's or subagent's reply; `undefined` when there is none. */
function parseVerdict(text: string): { ok: boolean; reason?: string } | undefined {
  const match = /\{[\s\S]*\}/.exec(text);
  let parsed: unknown;
  try {
    parsed = match ? JSON.parse(match[0]) : undefined;
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { ok?: unknown }).ok !== 'boolean') return undefined;
  const { ok, reason } = parsed as { ok: boolean; reason?: unknown };
  return typeof reason === 'string' ? { ok, reason } : { ok };
}

// Seconds, as current Claude Code defaults them.
const DEFAULT_TIMEOUT_S: Record<HookHandlerConfig['type'], number> = { command: 600, http: 600, prompt: 30, agent: 60, callback: 60 };
// UserPromptSubmit holds up the user's prompt, so Claude Code gives it 30 s unless configured.
const EVENT_DEFAULT_TIMEOUT_S: Partial<Record<HookEventName, number>> = { UserPromptSubmit: 30 };
// SessionEnd holds up closing the session: 1.5 s, raised to a longer configured `timeout` up to 60 s.
const SESSION_END_TIMEOUT_S = { floor: 1.5, max: 60 };

/** Milliseconds a handler may run: the configured `timeout`, else the event's or the type's default, never past what a timer can wait. */
export function hookTimeoutMs(event: HookEventName, handler: HookHandlerConfig): number {
  const seconds =
    event === 'SessionEnd'
      ? Math.min(Math.max(handler.timeout ?? 0, SESSION_END_TIMEOUT_S.floor), SESSION_END_TIMEOUT_S.max)
      : (handler.timeout ?? EVENT_DEFAULT_TIMEOUT_S[event] ?? DEFAULT_TIMEOUT_S[handler.type]);
  // A "never time out" figure like 99999999 would overflow the timer and fire at once (failing open).
  return Math.min(Math.max(1, seconds * 1000), MAX_TIMEOUT_MS);
}

const MATCHED_FIELD_EVENTS: ReadonlySet<HookEventName> = new Set([
  'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'SessionStart', 'SessionEnd', 'StopFailure', 'PreCompact', 'PostCompact', 'SubagentStart', 'SubagentStop', 'Notification',
]);
// Claude Code renamed Task to Agent in v2.1.63; configs name either, as `if` rules do.
const TOOL_ALIASES: Readonly<Record<string, string>> = { Task: 'Agent', Agent: 'Task' };
const TOOL_EVENTS: ReadonlySet<HookEventName> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure']);

/** Error for a hook that cannot run as configured; names the hook and says what to do. */
export class HookConfigurationError extends TesseraError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'hook_configuration', category: 'configuration', recoverable: false, details });
  }
}

export function entriesFrom(config: HooksConfig, source: HooksSource): HookEntry[] {
  const entries: HookEntry[] = [];
  for (const event of HOOK_EVENTS) {
    (config[event] ?? []).forEach((group, groupIndex) =>
      group.hooks.forEach((handler, handlerIndex) =>
        entries.push({
          event,
          ...(group.matcher === undefined ? {} : { matcher: group.matcher }),
          handler,
          source,
          location: `hooks.${event}[${groupIndex}].hooks[${handlerIndex}]`,
        }),
      ),
    );
  }
  return entries;
}

/** Finds the handlers for an event, runs them in parallel, and combines what they said. */
export class HookRunner {
  private readonly entries: HookEntry[];
  /** Entries from `HooksConfigSource`s (bundle plugins), replaced whole when a source changes. */
  private contributed: readonly HookEntry[] = [];

  constructor(
    entries: readonly HookEntry[],
    private readonly options: HookRunnerOptions = {},
  ) {
    this.entries = [...entries];
  }

  /** Every configured entry, in configuration order (settings first, then contributed sources). */
  list(): readonly HookEntry[] {
    return this.contributed.length === 0 ? this.entries : [...this.entries, ...this.contributed];
  }

  /** Adds handlers (the hooks plugin adds those of the files it reads at boot). */
  add(entries: readonly HookEntry[]): void {
    this.entries.push(...entries);
  }

  /** Replaces the handlers that came from hook configuration sources; the next run uses them. */
  setContributed(entries: readonly HookEntry[]): void {
    this.contributed = [...entries];
  }

  /** An option when given, else the call's service (per call: a rebind reaches later sessions). */
  private lookup<T>(given: T | undefined, token: Token<T>, session: ISession | undefined): T | undefined {
    if (given !== undefined) return given;
    const services = this.options.services ? this.options.services(session) : session?.services;
    return services?.getOptional(token);
  }

  has(event: HookEventName): boolean {
    return this.list().some((entry) => entry.event === event);
  }

  matching(call: Pick<HookCall, 'event' | 'matchValue' | 'tool' | 'session'>): HookEntry[] {
    const seen = new Set<string>();
    return this.list().filter((entry) => {
      if (entry.event !== call.event) return false;
      if (MATCHED_FIELD_EVENTS.has(call.event) && !this.matchesValue(entry.matcher, call)) return false;
      if (entry.handler.if !== undefined) {
        if (!TOOL_EVENTS.has(call.event) || !call.tool) return false;
        // Anchored where permission rules are (the session cwd), so the two cannot disagree.
        if (!matchesIfCondition(entry.handler.if, call.tool.name, call.tool.input, call.session?.cwd ?? process.cwd(), call.tool.permission)) return false;
      }
      // Identical handlers (from several layers or groups) run once. A command that names its
      // plugin's root is a different command per plugin, as Claude Code substitutes the root.
      const root = entry.handler.type === 'command' && entry.handler.command.includes('CLAUDE_PLUGIN_ROOT') ? (entry.source.pluginRoot ?? '') : '';
      const key = `${root}\0${handlerKey(entry.handler)}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  private matchesValue(matcher: string | undefined, call: Pick<HookCall, 'event' | 'matchValue'>): boolean {
    if (matchesMatcher(matcher, call.matchValue)) return true;
    const alias = TOOL_EVENTS.has(call.event) && call.matchValue !== undefined ? TOOL_ALIASES[call.matchValue] : undefined;
    return alias !== undefined && matchesMatcher(matcher, alias);
  }

  /**
   * The session's current directory as a host path: its shell's after a `cd` (under a
   * sandbox, the host directory that sandbox path stands for), else its cwd. A directory that
   * no longer exists falls back to the cwd too — Bash itself starts over there, and a command
   * hook cannot be spawned in a missing directory (a guard that cannot start would fail open).
   */
  currentDirectory(session: ISession | undefined): string {
    if (!session) return process.cwd();
    const shell = this.lookup(this.options.shellDirectories, ShellDirectories, session)?.cwdFor(session.sessionId);
    if (shell === undefined) return session.cwd;
    const root = this.lookup(this.options.sandboxPaths, SandboxPaths, session)?.root;
    const host = root === undefined ? shell : hostPathFor(shell, root, session.cwd);
    if (host === undefined) return session.cwd;
    return statSync(host, { throwIfNoEntry: false })?.isDirectory() ? host : session.cwd;
  }

  async run(call: HookCall): Promise<HookRunResult> {
    const entries = this.matching(call);
    if (entries.length === 0) return combineOutcomes(call.event, []);
    const { session } = call;
    const input: Record<string, unknown> = {
      session_id: session?.sessionId ?? '',
      transcript_path: this.options.transcriptPath?.(session) ?? '',
      cwd: this.currentDirectory(session),
      hook_event_name: call.event,
      ...(session ? { permission_mode: session.getPermissionMode() } : {}),
      ...call.fields,
    };
    const outcomes = await Promise.all(entries.map((entry) => this.runOne(entry, input, call)));
    return combineOutcomes(call.event, outcomes.filter((outcome): outcome is HandlerOutcome => outcome !== undefined));
  }

  private async runOne(entry: HookEntry, input: Record<string, unknown>, call: HookCall): Promise<HandlerOutcome | undefined> {
    const name = `${entry.source.file} ${entry.location}`;
    const { handler } = entry;
    const timeoutMs = hookTimeoutMs(entry.event, handler);
    const signal = call.signal ?? new AbortController().signal;
    const json = JSON.stringify(input);
    try {
      let result: ProcessOutcome;
      if (handler.type === 'command') {
        const projectDir = this.options.projectDir ?? call.session?.cwd ?? process.cwd();
        const env: Record<string, string> = { ...this.options.env, CLAUDE_PROJECT_DIR: projectDir };
        if (entry.source.pluginRoot) env.CLAUDE_PLUGIN_ROOT = entry.source.pluginRoot;
        const pending = runCommandHook(handler, { cwd: call.session ? this.currentDirectory(call.session) : projectDir, env, input: json, timeoutMs, signal });
        // `async: true` hooks run in the background and have no say.
        if (handler.async) return void pending.catch(() => undefined);
        result = await pending;
      } else if (handler.type === 'http') {
        result = await runHttpHook(handler, json, { timeoutMs, signal });
      } else if (handler.type === 'callback') {
        result = await runCallbackHook(handler, input, { timeoutMs, signal });
      } else {
        result = await this.askModel(entry, name, input, call, timeoutMs, signal);
      }
      return interpretOutcome(name, entry.event, result);
    } catch (error) {
      return {
        hook: name, exitCode: 1, stdout: '', stderr: describeError(error), blocked: false, additionalContext: [],
        notice: `${name} could not run: ${describeError(error)}`,
      };
    }
  }

  /** `prompt` asks the provider, `agent` a subagent, for `{ "ok": boolean, "reason": string }`. */
  private async askModel(entry: HookEntry, name: string, input: Record<string, unknown>, call: HookCall, timeoutMs: number, outer: AbortSignal): Promise<ProcessOutcome> {
    const handler = entry.handler as HookHandlerConfig & { type: 'prompt' | 'agent' };
    const json = JSON.stringify(input);
    const prompt = handler.prompt.includes('$ARGUMENTS') ? handler.prompt.replaceAll('$ARGUMENTS', json) : `${handler.prompt}\n\n${json}`;
    const signal = AbortSignal.any([outer, AbortSignal.timeout(timeoutMs)]);
    let verdict: { ok: boolean; reason?: string };
    if (handler.type === 'agent' && this.options.runAgentHook) {
      verdict = await this.options.runAgentHook({ handler: handler as HookHandlerConfig & { type: 'agent' }, prompt, input, session: call.session, signal });
    } else if (handler.type === 'agent') {
      const launcher = this.lookup(this.options.subagentLauncher, SubagentLauncher, call.session);
      if (!launcher) {
        throw new HookConfigurationError(
          `${name} is an "agent" hook, but no subagent runner is available: add the subagents plugin (it binds SubagentLauncher), pass runAgentHook to hooksPlugin, or change the hook to "type": "prompt" or "command".`,
          { file: entry.source.file, path: entry.location, event: entry.event },
        );
      }
      const { text } = await launcher.launch({
        prompt: `${prompt}\n\n${VERDICT_INSTRUCTION}`,
        ...(handler.model ? { model: handler.model } : {}),
        parentSessionId: call.session?.sessionId ?? 'hooks',
        cwd: call.session?.cwd ?? this.options.projectDir ?? process.cwd(),
        signal,
      });
      const parsed = parseVerdict(text);
      if (!parsed) return { exitCode: 1, stdout: '', stderr: `the subagent did not answer with {"ok": boolean}: ${text.slice(0, 200)}` };
      verdict = parsed;
    } else {
      const provider = this.lookup(this.options.provider, Provider, call.session);
      if (!provider) throw new HookConfigurationError(`${name} is a "prompt" hook, but no Provider is bound.`, { file: entry.source.file, path: entry.location });
      const reply = await provider.stream({
        messages: [{ role: 'user', content: prompt }],
        system: `You evaluate a hook condition for a coding agent. ${VERDICT_INSTRUCTION}`,
        tools: [],
        signal,
        ...(handler.model ? { model: handler.model } : {}),
      });
      const text = messageText(reply);
      const parsed = parseVerdict(text);
      if (!parsed) return { exitCode: 1, stdout: '', stderr: `the model did not answer with {"ok": boolean}: ${text.slice(0, 200)}` };
      verdict = parsed;
    }
    if (signal.aborted) return { exitCode: 1, stdout: '', stderr: '', timedOut: !outer.aborted, aborted: outer.aborted };
    return verdict.ok
      ? { exitCode: 0, stdout: '', stderr: '' }
      : { exitCode: 2, stdout: '', stderr: verdict.reason ?? `blocked by a${handler.type === 'agent' ? 'n' : ''} ${handler.type} hook` };
  }
}

/**
 * Runs an in-process callback under the handler's timeout. Its answer is read as a command's
 * stdout would be (JSON output, exit 0); a throw is a failed hook (a notice, no say).
 */
async function runCallbackHook(
  handler: CallbackHookHandler,
  input: Record<string, unknown>,
  { timeoutMs, signal }: { timeoutMs: number; signal: AbortSignal },
): Promise<ProcessOutcome> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const stopped = new Promise<'timeout' | 'aborted'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
      controller.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
    const answer = await Promise.race([Promise.resolve().then(() => handler.callback(input, controller.signal)), stopped]);
    if (answer === 'timeout' || answer === 'aborted') {
      controller.abort();
      return { exitCode: 1, stdout: '', stderr: '', timedOut: answer === 'timeout', aborted: answer === 'aborted' };
    }
    const stdout = answer === undefined || answer === null ? '' : typeof answer === 'string' ? answer : JSON.stringify(answer);
    return { exitCode: 0, stdout, stderr: '' };
  } catch (error) {
    return { exitCode: 1, stdout: '', stderr: describeError(error) };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
