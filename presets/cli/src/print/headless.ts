import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  describeError,
  parsePermissionMode,
  PERMISSION_MODES,
  type ApprovalAnswer,
  type ApprovalHandler,
  type ApprovalRequest,
  type AgentDefinition,
  type HookEventName,
  type HooksConfig,
  type ImageBlock,
  type TextBlock,
  type Message,
  type SessionEvent,
  compareText,
  SessionStore,
  toolUses,
} from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession, Stage, type Kernel, type Plugin, type Session } from '@tessera/kernel';
import type { CliFlags } from '../args.js';
import { checkSessionIdFlags, CliUsageError, splitToolList } from '../args.js';
import type { CliIO } from '../io.js';
import { loadCliPreset } from '../load-cli-preset.js';
import { DEMO_MODEL_ID } from '../demo-model.js';
import { loadRunSettings, type CliSettings } from '../settings.js';
import { chooseProvider, resolveModelAlias, type ProviderChoice } from '../provider-selection.js';
import { TESSERA_VERSION } from '../version.js';
import { ControlChannel, ControlRequestError, isRecord } from './control-channel.js';
import {
  addUsage,
  assistantMessage,
  costUsd,
  emptyUsage,
  hasPrice,
  PartialMessageStream,
  toAnthropicUsage,
  toolResultMessage,
  type AnthropicUsage,
  type ModelUsageEntry,
  type PermissionDenial,
  type ResultMessage,
  type ResultSubtype,
} from './sdk-messages.js';
import { StdinLines } from './stdin-lines.js';
import { readUserContent } from './user-content.js';
import {
  MAX_STRUCTURED_OUTPUT_ATTEMPTS,
  parseJsonSchemaFlag,
  STRUCTURED_OUTPUT_INSTRUCTIONS,
  STRUCTURED_OUTPUT_REMINDER,
  STRUCTURED_OUTPUT_TOOL,
  structuredOutputPlugin,
  type StructuredOutputSchema,
} from './structured-output.js';
import { runPresetOptions } from '../run-preset-options.js';
import { addAgentDefinitions, cliCommandHostAdapters, hostListings, loadedPluginsForInit, mcpServerStates, type HostListings } from '../host-adapters.js';
import { cliMcpOptions } from '../mcp-setup.js';
import { McpClients } from '@tessera/plugin-mcp/plugin';
import { offeredTools } from '@tessera/plugin-permissions';
import { parseAgentsFlag } from '../inline-agents.js';

const STDIN_CAP_BYTES = 10 * 1024 * 1024;
/** How long a `can_use_tool` ask may wait for the host before it counts as a refusal. */
const DEFAULT_PERMISSION_TIMEOUT_MS = 5 * 60_000;

/** Exit codes as Claude Code's: 0 success, 1 failure; signals as the shell reports them. */
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

interface TurnTotals {
  usage: AnthropicUsage;
  apiMs: number;
  rounds: number;
  denials: PermissionDenial[];
  errors: string[];
  lastStop: string | null;
  interrupted: boolean;
}

/**
 * Print mode and the SDK's headless mode: one prompt (argument or piped stdin), or a stream of
 * stream-json user messages and control requests on stdin, answered with Claude Code's output
 * formats on stdout. Everything else goes to stderr.
 */
export async function runHeadless(flags: CliFlags, io: CliIO): Promise<number> {
  // `TESSERA_TIMING=1`: where a run's time goes, as `+ms phase` lines on stderr.
  const mark = io.env.TESSERA_TIMING === '1' ? (phase: string) => io.stderr(`[timing] +${Math.round(performance.now())} ms, rss ${Math.round(process.memoryUsage.rss() / 2 ** 20)} MB: ${phase}\n`) : () => undefined;
  mark('headless');
  checkFlagCombinations(flags);
  // `--json-schema`: an invalid schema exits 1 before anything runs.
  const structured = flags.jsonSchema === undefined ? undefined : parseJsonSchemaFlag(flags.jsonSchema);
  let mainSessionId: string | undefined;
  const prepared = loadRunSettings(flags, io);
  if ('exitCode' in prepared) return prepared.exitCode;
  const { cwd, settings } = prepared;
  const streamInput = flags.inputFormat === 'stream-json';
  const out = new Output(flags, io);

  const choice = chooseProvider(flags.provider, settings.providerSettings, io.env);
  if (choice.kind === 'none') {
    io.stderr(`${choice.message}\n`);
    return 1;
  }

  // Headless input: read until `initialize` (or the first user message) before composing, so the
  // host's hooks and system prompt are part of the composition.
  const lines = streamInput ? new StdinLines(io.stdin ?? process.stdin) : undefined;
  const control = new ControlChannel((message) => out.line(message));
  let initialize: { requestId: string; request: Record<string, unknown> } | undefined;
  const early: Array<{ value: Record<string, unknown> | undefined; raw: string; line: number }> = [];
  if (lines) {
    for (;;) {
      const next = await lines.next();
      if (next === undefined) break;
      early.push(next);
      const value = next.value;
      if (value?.type === 'control_request' && isRecord(value.request) && value.request.subtype === 'initialize' && typeof value.request_id === 'string') {
        initialize = { requestId: value.request_id, request: value.request };
        early.pop();
        break;
      }
      if (value?.type === 'user') break;
    }
  }

  const prompt = streamInput ? undefined : await readPrompt(flags, io);
  if (!streamInput && (prompt === undefined || prompt.trim() === '')) {
    io.stderr('Error: Input must be provided either through stdin or as a prompt argument when using --print\n');
    return 1;
  }

  const host = new HostBridge(control, initialize?.request, flags, io);
  const mcpSetup = cliMcpOptions({ flags, home: io.home, cwd, settings: settings.loaded.config as Record<string, unknown>, settingSources: settings.settingSources, show: (message) => io.stderr(`${message}\n`) });
  for (const warning of mcpSetup.warnings) io.stderr(`${warning}\n`);
  let kernel: Kernel;
  try {
    mark('settings and provider chosen');
    const base = runPresetOptions({ flags, io, cwd, settings, choice, approvalHandler: host.approvalHandler(), mcp: mcpSetup.mcp });
    const agents = host.agents();
    kernel = await createKernel({
      plugins: await loadCliPreset({
        ...base,
        // `--json-schema`: the StructuredOutput tool runs without asking, and `--tools` keeps it.
        ...(structured
          ? {
              permissions: { ...base.permissions, allow: [...(base.permissions?.allow ?? []), STRUCTURED_OUTPUT_TOOL] },
              ...(base.tools === undefined ? {} : { tools: [...base.tools, STRUCTURED_OUTPUT_TOOL] }),
            }
          : {}),
        hookConfigs: [...settings.hookConfigs, ...host.hookConfigs()],
        ...(agents.length === 0 ? {} : { agents: mergeAgents(base.agents ?? [], agents) }),
        ...(flags.fallbackModel === undefined
          ? {}
          : {
              fallbackModels: flags.fallbackModel.split(',').map((model) => resolveModelAlias(model.trim())!),
              onFallback: (from: string | undefined, to: string) => io.stderr(`${from ?? 'The model'} is overloaded; switching to ${to}.\n`),
            }),
        plugins: [out.historyTap(), ...(structured ? [structuredOutputPlugin(structured, () => mainSessionId)] : [])],
      }),
    });
  } catch (error) {
    io.stderr(`Could not start: ${describeError(error)}\n`);
    return 1;
  }

  let interactive: InteractiveSession | undefined;
  let exitCode = 0;
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    // A second signal while the first is being handled: leave now.
    if (signalled) process.exit(signal === 'SIGINT' ? EXIT_SIGINT : EXIT_SIGTERM);
    signalled = true;
    exitCode = signal === 'SIGINT' ? EXIT_SIGINT : EXIT_SIGTERM;
    interactive?.abort();
    if (signal === 'SIGTERM') lines?.end();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Nobody reads the output any more: end the turn and the input, save the session, exit 1 quietly.
  const onStdoutClosed = (): void => {
    if (exitCode === 0) exitCode = 1;
    interactive?.abort();
    lines?.end();
  };
  io.stdoutClosed?.addEventListener('abort', onStdoutClosed, { once: true });
  try {
    await refuseSessionIdInUse(kernel, flags);
    await refuseNothingToContinue(kernel, flags, cwd);
    const resumeId = await resolveResume(kernel, flags, cwd);
    interactive = new InteractiveSession({
      kernel,
      cwd,
      ...(flags.sessionId === undefined ? {} : { sessionId: flags.sessionId }),
      ...(resumeId === undefined ? {} : { resumeSessionId: resumeId }),
      ...(flags.continue || flags.resume === true ? { continueMostRecent: true } : {}),
      ...(flags.forkSession ? { forkSession: true } : {}),
      ...(flags.model === undefined ? {} : { model: resolveModelAlias(flags.model)! }),
      ...(settings.permissionMode === undefined ? {} : { permissionMode: settings.permissionMode }),
      ...withStructuredOutputInstructions(host.systemPromptOptions(settings), structured),
      sessionOptions: { ...(flags.maxTurns === undefined ? {} : { maxTurns: flags.maxTurns }) },
      commandHostAdapters: cliCommandHostAdapters(kernel),
    });
    mark('kernel composed');
    await interactive.whenReady();
    // Declare (and start) the MCP servers now, so `system/init` lists them; loads nothing without any.
    await kernel.getOptional(McpClients)?.connect({ sessionId: interactive.getSessionId(), cwd });
    mark('session ready');
  } catch (error) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.stdoutClosed?.removeEventListener('abort', onStdoutClosed);
    io.stderr(`${describeError(error)}\n`);
    await kernel.shutdown().catch(() => undefined);
    return 1;
  }

  const session = interactive.getSession();
  mainSessionId = session.sessionId;
  // As Claude Code: a stream-json client (set_permission_mode, a setMode update) may switch to
  // bypassPermissions only when the command line opted in or the session started in it.
  if (!flags.dangerouslySkipPermissions && !flags.allowDangerouslySkipPermissions && session.getPermissionMode() !== 'bypassPermissions') {
    session.limitPermissionModes(PERMISSION_MODES.filter((mode) => mode !== 'bypassPermissions'));
  }
  host.attach(session);
  const listings = await hostListings(kernel, interactive);
  host.kernel = kernel;
  const modelLabel = choice.kind === 'demo' ? DEMO_MODEL_ID : (session.getModel() ?? choice.profile.model ?? 'default');
  const run = new TurnRunner(interactive, session, out, flags, modelLabel, structured, initMessage(session, interactive, cwd, modelLabel, choice, flags, settings.permissions.deny ?? [], loadedPluginsForInit(kernel), () => mcpServerStates(kernel), listings));
  if (initialize) host.answerInitialize(initialize.requestId, interactive, listings);
  // In headless input mode `system/init` is the first line, before anything the input causes.
  if (lines) run.sendInit();

  try {
    if (!lines) {
      const ok = await run.turn(prompt!);
      mark('turn done');
      if (!ok && exitCode === 0) exitCode = 1;
    } else {
      const queue = new UserQueue();
      const reader = (async () => {
        const handle = (entry: { value: Record<string, unknown> | undefined; raw: string; line: number }): void => {
          const { value } = entry;
          if (value === undefined) {
            out.line({ type: 'system', subtype: 'error', session_id: session.sessionId, uuid: randomUUID(), error: `stdin line ${entry.line} is not a JSON object; it was skipped: ${entry.raw.slice(0, 200)}` });
            return;
          }
          switch (value.type) {
            case 'user': {
              const content = readUserContent(value.message, entry.line);
              if ('error' in content) {
                // In its place in the queue: the host reads one result per message it sent (an
                // empty message too, or it would wait for that result forever).
                queue.push({ text: '', refusal: content.error });
                return;
              }
              if (content.skipped.length > 0) {
                out.line({
                  type: 'system',
                  subtype: 'error',
                  session_id: session.sessionId,
                  uuid: randomUUID(),
                  error: `stdin line ${entry.line}: ${content.skipped.join(', ')} content blocks are not supported yet and were left out`,
                });
              }
              // The echo carries a `uuid` as every line does: the host's own, else a new one.
              const echo = flags.replayUserMessages ? { ...value, session_id: session.sessionId, uuid: typeof value.uuid === 'string' ? value.uuid : randomUUID(), isReplay: true } : undefined;
              queue.push({ text: content.text, ...(content.blocks ? { blocks: content.blocks } : {}), ...(echo ? { echo } : {}) });
              return;
            }
            case 'control_request':
              host.handleRequest(value, entry.line, interactive!, session, queue);
              return;
            case 'control_response':
              control.handleResponse(value);
              return;
            case 'control_cancel_request':
            case 'keep_alive':
            default:
              return;
          }
        };
        for (const entry of early) handle(entry);
        for (;;) {
          const entry = await lines.next();
          if (entry === undefined) break;
          handle(entry);
        }
        control.close();
        queue.close();
      })();
      for (;;) {
        const next = await queue.take();
        if (next === undefined) break;
        if (next.refusal !== undefined) {
          run.refuse(next.refusal);
          continue;
        }
        // A replayed message is echoed when its turn starts, after the previous turn's result.
        if (next.echo) out.line(next.echo);
        // Each turn ends in its own result; the host reads `is_error` (exit 0 at the end, as Claude Code's SDK mode).
        await run.turn(next.text, next.blocks);
      }
      await reader;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.stdoutClosed?.removeEventListener('abort', onStdoutClosed);
    await interactive.shutdown({ reason: exitCode === 0 ? 'other' : 'prompt_input_exit' }).catch((error: unknown) => io.stderr(`Could not save the session: ${describeError(error)}\n`));
    mark('session shut down');
    await kernel.shutdown().catch(() => undefined);
    mark('kernel shut down');
    out.finish();
  }
  return exitCode !== 0 ? exitCode : run.lastFailed && !lines ? 1 : 0;
}

/** `--agents` and the SDK's `initialize.agents`: one list, the host's winning a name. */
function mergeAgents(flag: readonly AgentDefinition[], host: readonly AgentDefinition[]): AgentDefinition[] {
  const byName = new Map(flag.map((agent) => [agent.name, agent]));
  for (const agent of host) byName.set(agent.name, agent);
  return [...byName.values()];
}

/** `--json-schema`: the instructions to call StructuredOutput, after the rest of the system prompt. */
function withStructuredOutputInstructions(options: { systemPrompt?: string; appendSystemPrompt?: string }, structured: StructuredOutputSchema | undefined): { systemPrompt?: string; appendSystemPrompt?: string } {
  if (!structured) return options;
  if (options.systemPrompt !== undefined) return { systemPrompt: `${options.systemPrompt}\n\n${STRUCTURED_OUTPUT_INSTRUCTIONS}` };
  return { appendSystemPrompt: options.appendSystemPrompt === undefined ? STRUCTURED_OUTPUT_INSTRUCTIONS : `${options.appendSystemPrompt}\n\n${STRUCTURED_OUTPUT_INSTRUCTIONS}` };
}

function checkFlagCombinations(flags: CliFlags): void {
  if (flags.outputFormat === 'stream-json' && !flags.verbose && flags.print) {
    throw new CliUsageError('Error: When using --print, --output-format=stream-json requires --verbose');
  }
  if (flags.inputFormat === 'stream-json' && flags.outputFormat !== 'stream-json') {
    throw new CliUsageError('Error: --input-format=stream-json requires output-format=stream-json.');
  }
  if (flags.includePartialMessages && flags.outputFormat !== 'stream-json') {
    throw new CliUsageError('Error: --include-partial-messages requires --print and --output-format=stream-json.');
  }
  if (flags.replayUserMessages && flags.inputFormat !== 'stream-json') {
    throw new CliUsageError('Error: --replay-user-messages requires --input-format=stream-json and --output-format=stream-json.');
  }
  checkSessionIdFlags(flags);
  if (flags.systemPrompt !== undefined && flags.systemPromptFile !== undefined) throw new CliUsageError('Error: Cannot use both --system-prompt and --system-prompt-file.');
  if (flags.appendSystemPrompt !== undefined && flags.appendSystemPromptFile !== undefined) {
    throw new CliUsageError('Error: Cannot use both --append-system-prompt and --append-system-prompt-file.');
  }
}

/**
 * `--session-id` names a new session: one already stored is refused, as Claude Code refuses it
 * (a second conversation written into it would hide the first); `--resume` continues one.
 */
export async function refuseSessionIdInUse(kernel: Kernel, flags: CliFlags): Promise<void> {
  if (flags.sessionId === undefined) return;
  const store = kernel.getOptional(SessionStore);
  if (store === undefined || (await store.load(flags.sessionId)) === undefined) return;
  await store.release?.(flags.sessionId);
  throw new CliUsageError(`Error: Session ID ${flags.sessionId} is already in use. To continue that conversation, use --resume ${flags.sessionId}; for a new one, pass another id or leave --session-id out.`);
}

/**
 * Print mode's `-c` (and `-r` without an id) with no conversation in this folder: exit 1, as
 * Claude Code (a resume target not found), not a new session a script would take for the old one.
 */
async function refuseNothingToContinue(kernel: Kernel, flags: CliFlags, cwd: string): Promise<void> {
  if (!flags.continue && flags.resume !== true) return;
  if ((await InteractiveSession.listResumableSessions(kernel, cwd)).length > 0) return;
  const flag = flags.continue ? '--continue' : '--resume';
  throw new CliUsageError(`No conversation found to continue in ${cwd}. Leave out ${flag} to start a new one, or list the sessions with: tessera sessions list --all`);
}

/** With a prompt argument, piped stdin is waited for this long before the run goes on without it. */
const STDIN_WAIT_MS = 3000;

async function readPrompt(flags: CliFlags, io: CliIO): Promise<string | undefined> {
  const argument = flags.positionals.length > 0 ? flags.positionals.join(' ') : undefined;
  if (io.stdinIsTTY !== false || !io.stdin) return argument;
  const piped = await readStdin(io.stdin, argument === undefined ? undefined : Number(io.env.TESSERA_STDIN_WAIT_MS ?? STDIN_WAIT_MS));
  if (piped === undefined) {
    io.stderr(`Warning: no stdin data received in ${Math.round(Number(io.env.TESSERA_STDIN_WAIT_MS ?? STDIN_WAIT_MS) / 1000)}s, proceeding without it.\n`);
    return argument;
  }
  const text = piped.trimEnd();
  if (text === '') return argument;
  return argument === undefined ? text : `${argument}\n\n${text}`;
}

/**
 * All of stdin, capped; `undefined` when `firstDataMs` passes with no data at all (a parent that
 * keeps the pipe open and never writes must not hang a run that has its prompt).
 */
function readStdin(stream: NodeJS.ReadableStream, firstDataMs: number | undefined): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (value: string | undefined, error?: Error): void => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string): void => {
      clearTimeout(timer);
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > STDIN_CAP_BYTES) {
        (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        finish(undefined, new CliUsageError(`Error: stdin is larger than ${STDIN_CAP_BYTES / 1024 / 1024} MB; pass a file path in the prompt instead.`));
        return;
      }
      chunks.push(buffer);
    };
    const onEnd = (): void => finish(Buffer.concat(chunks).toString('utf8'));
    const onError = (error: Error): void => finish(undefined, error);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    if (firstDataMs !== undefined) {
      timer = setTimeout(() => {
        if (chunks.length > 0) return;
        (stream as NodeJS.ReadableStream & { pause?: () => void }).pause?.();
        finish(undefined);
      }, firstDataMs);
    }
  });
}


/** `-r <id|name>`: an id as given; a name is looked up among this directory's sessions. */
export async function resolveResume(kernel: Kernel, flags: CliFlags, cwd: string): Promise<string | undefined> {
  if (typeof flags.resume !== 'string') return undefined;
  const wanted = flags.resume;
  const sessions = await InteractiveSession.listResumableSessions(kernel);
  const found =
    sessions.find((stored) => stored.id === wanted) ??
    sessions.filter((stored) => stored.name === wanted).sort((a, b) => (a.cwd === cwd ? -1 : 0) - (b.cwd === cwd ? -1 : 0) || compareText(b.updatedAt, a.updatedAt))[0];
  if (!found) throw new CliUsageError(`No conversation found with session ID or name: ${wanted}. List them with: tessera sessions list --all`);
  // As Claude Code: a session is resumed from its own folder (its files, settings and permissions are that folder's).
  if (found.cwd !== undefined && resolve(found.cwd) !== resolve(cwd)) {
    throw new CliUsageError(`This conversation is from a different directory (${found.cwd}). To resume it, run:\n  cd ${shellQuote(found.cwd)} && tessera --resume ${found.id}`);
  }
  return found.id;
}

function initMessage(
  session: Session,
  interactive: InteractiveSession,
  cwd: string,
  model: string,
  choice: ProviderChoice,
  flags: CliFlags,
  deny: readonly string[],
  plugins: ReadonlyArray<{ name: string; path: string }>,
  mcpServers: () => ReadonlyArray<{ name: string; status: string }>,
  listings: HostListings,
): () => Record<string, unknown> {
  return () => ({
    type: 'system',
    subtype: 'init',
    cwd,
    session_id: session.sessionId,
    // As the model's list: a tool a bare-name deny rule removes is not offered (Claude Code lists it nowhere).
    tools: offeredTools({ deny }, session.toolSchemas).map((schema) => schema.name),
    mcp_servers: mcpServers().map((server) => ({ name: server.name, status: server.status })),
    model,
    permissionMode: session.getPermissionMode(),
    slash_commands: listings.commands.map((command) => command.name),
    apiKeySource: choice.kind === 'demo' ? 'none' : choice.kind === 'profile' ? choice.source : 'none',
    claude_code_version: TESSERA_VERSION,
    tessera_version: TESSERA_VERSION,
    output_style: 'default',
    agents: listings.agents.map((agent) => agent.name),
    skills: listings.skills,
    plugins,
    ...(flags.provider === 'demo' || choice.kind === 'demo' ? { demo_model: true } : {}),
    uuid: randomUUID(),
  });
}

/** Where output goes, per `--output-format`. */
class Output {
  private readonly collected: Record<string, unknown>[] = [];
  private readonly listeners = new Set<(message: Message, session: unknown) => void>();

  constructor(
    private readonly flags: CliFlags,
    private readonly io: CliIO,
  ) {}

  /** A protocol line: written at once in stream-json, kept for `json --verbose`. */
  line(message: Record<string, unknown>): void {
    if (this.flags.outputFormat === 'stream-json') this.io.stdout(`${JSON.stringify(message)}\n`);
    else if (this.flags.outputFormat === 'json' && this.flags.verbose) this.collected.push(message);
  }

  result(result: ResultMessage): void {
    if (this.flags.outputFormat === 'stream-json') this.io.stdout(`${JSON.stringify(result)}\n`);
    else if (this.flags.outputFormat === 'json') {
      if (this.flags.verbose) this.collected.push(result as unknown as Record<string, unknown>);
      else this.io.stdout(`${JSON.stringify(result)}\n`);
    } else if (result.is_error) {
      // As Claude Code: a failure inside the run is the result, on stdout (exit 1 says it failed);
      // only usage errors before the run go to stderr.
      this.io.stdout(`${result.errors?.join('\n') || result.result || 'Error'}\n`);
    } else if (result.structured_output !== undefined) this.io.stdout(`${JSON.stringify(result.structured_output)}\n`);
    else this.io.stdout(`${result.result ?? ''}\n`);
  }

  /** Human progress for `text` output with `--verbose` (stderr keeps stdout the answer only). */
  progress(text: string): void {
    if (this.flags.outputFormat === 'text' && this.flags.verbose) this.io.stderr(text);
  }

  finish(): void {
    if (this.flags.outputFormat === 'json' && this.flags.verbose) this.io.stdout(`${JSON.stringify(this.collected)}\n`);
  }

  onMessage(listener: (message: Message, session: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A plugin that reports each chat message as history receives it (tool results included). */
  historyTap(): Plugin {
    const listeners = this.listeners;
    return definePlugin({
      name: 'cli-output',
      register({ hooks }) {
        hooks.historyAppend.tap({ name: 'cli-output', stage: Stage.Observe }, ({ entry, session }) => {
          if (entry.category !== 'chat' || listeners.size === 0) return;
          for (const listener of listeners) listener(entry.data as Message, session);
        });
      },
    });
  }
}

/** Runs one prompt and writes its messages and result. */
class TurnRunner {
  lastFailed = false;
  private initSent = false;
  private readonly models = new Map<string, ModelUsageEntry>();
  private readonly totalUsage = emptyUsage();
  private totalCost = 0;

  constructor(
    private readonly interactive: InteractiveSession,
    private readonly session: Session,
    private readonly out: Output,
    private readonly flags: CliFlags,
    private readonly model: string,
    private readonly structured: StructuredOutputSchema | undefined,
    private readonly init: () => Record<string, unknown>,
  ) {}

  sendInit(): void {
    if (this.initSent) return;
    this.initSent = true;
    this.out.line(this.init());
  }

  /**
   * A stream-json message that cannot be sent (a bad image block): its result is an error
   * naming the line and field, and no model call is made.
   */
  refuse(error: string): void {
    this.sendInit();
    const result: ResultMessage = {
      type: 'result',
      subtype: 'error_during_execution',
      uuid: randomUUID(),
      session_id: this.session.sessionId,
      is_error: true,
      duration_ms: 0,
      duration_api_ms: 0,
      num_turns: 0,
      stop_reason: null,
      terminal_reason: 'invalid_input',
      total_cost_usd: this.totalCost,
      usage: emptyUsage(),
      modelUsage: Object.fromEntries(this.models),
      permission_denials: [],
      errors: [error],
    };
    this.out.result(result);
    this.lastFailed = true;
  }

  /** Runs `prompt`; with `blocks` (a stream-json message with images), its message holds them. */
  async turn(prompt: string, blocks?: ReadonlyArray<TextBlock | ImageBlock>): Promise<boolean> {
    const { session, out, flags } = this;
    this.sendInit();
    const started = Date.now();
    // `--max-budget-usd`, over the whole process (cost is cumulative across stream-json turns):
    // checked before a turn and after each model call. Once reached, no further model call is
    // made and the tool calls of the reply that reached it are not run.
    const budget = flags.maxBudgetUsd;
    let overBudget = budget !== undefined && this.spent() >= budget;
    const totals: TurnTotals = { usage: emptyUsage(), apiMs: 0, rounds: 0, denials: [], errors: [], lastStop: null, interrupted: false };
    const toolData = new Map<string, unknown>();
    const inputs = new Map<string, unknown>();
    // `--json-schema`: the accepted StructuredOutput input ends the turn; failed attempts are counted.
    const structured = this.structured;
    let structuredOutput: { value: unknown } | undefined;
    let structuredFailures = 0;
    let structuredGaveUp = false;
    let roundStarted = started;
    let messageId = `msg_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const partial = flags.includePartialMessages
      ? new PartialMessageStream((event) => out.line({ type: 'stream_event', event, session_id: session.sessionId, parent_tool_use_id: null, uuid: randomUUID() }), () => messageId, this.model)
      : undefined;
    let atLineStart = true;
    const progress = (text: string): void => {
      if (text === '') return;
      out.progress(text);
      atLineStart = text.endsWith('\n');
    };
    const unsubscribe = session.subscribe((event: SessionEvent) => {
      switch (event.type) {
        case 'text_delta':
          partial?.delta('text', event.delta);
          progress(event.delta);
          break;
        case 'thinking_delta':
          partial?.delta('thinking', event.delta);
          break;
        case 'assistant_message': {
          totals.rounds += 1;
          totals.apiMs += Date.now() - roundStarted;
          partial?.finish(event.message);
          const usage = toAnthropicUsage(event.message.usage);
          addUsage(totals.usage, usage);
          this.priceCall(event.message, usage, session.getModel());
          totals.lastStop = event.message.stopReason ?? null;
          // Aborted here, synchronously, the turn ends before running the reply's tool calls.
          if (budget !== undefined && !overBudget && this.spent() >= budget && toolUses(event.message).length > 0) {
            overBudget = true;
            this.interactive.abort();
          }
          out.line(assistantMessage(event.message, session.sessionId, messageId, this.model));
          messageId = `msg_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
          break;
        }
        case 'tool_start':
          inputs.set(event.toolCallId, event.input);
          progress(`${atLineStart ? '' : '\n'}  → ${event.toolName}(${summarize(event.input)})`);
          break;
        case 'tool_end':
          if (event.data !== undefined) toolData.set(event.toolCallId, event.data);
          if (structured && event.toolName === STRUCTURED_OUTPUT_TOOL && structuredOutput === undefined && !structuredGaveUp) {
            const data = event.data as { structuredOutput?: unknown } | undefined;
            if (event.success && data !== undefined && 'structuredOutput' in data) {
              structuredOutput = { value: data.structuredOutput };
              // The answer is in: no further model call (the rest of this batch is skipped).
              this.interactive.abort();
            } else if (!event.denied && (structuredFailures += 1) >= MAX_STRUCTURED_OUTPUT_ATTEMPTS) {
              structuredGaveUp = true;
              this.interactive.abort();
            }
          }
          if (event.denied) totals.denials.push({ tool_name: event.toolName, tool_use_id: event.toolCallId, tool_input: event.input ?? inputs.get(event.toolCallId) ?? {} });
          progress(event.success ? ' ✓\n' : event.denied ? ' ✗ denied\n' : ` ✗ ${event.errorCode ?? 'failed'}\n`);
          break;
        case 'provider_retry':
          out.line({
            type: 'system',
            subtype: 'api_retry',
            attempt: event.retry.attempt,
            max_retries: event.retry.maxRetries,
            retry_delay_ms: Math.round(event.retry.delayMs),
            error_status: event.retry.status ?? null,
            error: event.retry.code,
            message: event.retry.message,
            session_id: session.sessionId,
            uuid: randomUUID(),
          });
          break;
        case 'compact':
          out.line({ type: 'system', subtype: 'compact_boundary', session_id: session.sessionId, uuid: randomUUID(), compact_metadata: { trigger: event.trigger, pre_tokens: event.before?.usedTokens ?? 0 } });
          break;
        case 'error':
          totals.errors.push(event.message);
          break;
        case 'interrupted':
          totals.interrupted = true;
          break;
        default:
          break;
      }
    });
    const stopMessages = out.onMessage((message, owner) => {
      // Another session's model call (a subagent's; they share the kernel's hooks): priced into
      // `total_cost_usd` and `modelUsage` as Claude Code does (`usage` stays the main loop's), and
      // under `--max-budget-usd` the call that reaches the budget ends the turn, the subagent with it.
      if (owner !== session) {
        if (message.role !== 'assistant' || message.usage === undefined) return;
        this.priceCall(message, toAnthropicUsage(message.usage), (owner as { getModel?: () => string | undefined }).getModel?.() ?? session.getModel());
        if (budget !== undefined && !overBudget && this.spent() >= budget) {
          overBudget = true;
          this.interactive.abort();
        }
        return;
      }
      if (message.role !== 'tool') return;
      out.line(toolResultMessage(message, session.sessionId, toolData));
      roundStarted = Date.now();
    });
    let response = '';
    try {
      let result = overBudget ? undefined : await this.interactive.submit(prompt, undefined, undefined, blocks ? { content: blocks } : undefined);
      // `--json-schema`: a reply that ended without a conforming call gets a reminder, up to the limit.
      while (structured && result !== undefined && structuredOutput === undefined && !structuredGaveUp && !overBudget && !totals.interrupted && totals.errors.length === 0 && !this.stoppedAtMaxTurns(totals.rounds)) {
        structuredFailures += 1;
        if (structuredFailures >= MAX_STRUCTURED_OUTPUT_ATTEMPTS) {
          structuredGaveUp = true;
          break;
        }
        result = await this.interactive.submit(STRUCTURED_OUTPUT_REMINDER);
      }
      response = result?.response ?? '';
    } catch (error) {
      const message = describeError(error);
      // The session already reported it as an `error` event when it ended the turn.
      if (!totals.errors.includes(message) && !overBudget) totals.errors.push(message);
    } finally {
      unsubscribe();
      stopMessages();
    }
    if (!atLineStart) progress('\n');

    const history = session.getHistory();
    const hitMaxTurns = structuredOutput === undefined && this.stoppedAtMaxTurns(totals.rounds) && history.at(-1)?.role === 'tool';
    // The abort that ended a turn at its accepted StructuredOutput call is not an interruption.
    const interrupted = totals.interrupted && structuredOutput === undefined && !structuredGaveUp;
    const subtype: ResultSubtype = overBudget
      ? 'error_max_budget_usd'
      : structuredOutput !== undefined
        ? 'success'
        : structuredGaveUp
          ? 'error_max_structured_output_retries'
          : totals.errors.length > 0 || interrupted
            ? 'error_during_execution'
            : hitMaxTurns
              ? 'error_max_turns'
              : structured
                ? 'error_max_structured_output_retries'
                : 'success';
    addUsage(this.totalUsage, totals.usage);
    this.totalCost = [...this.models.entries()].reduce((sum, [, entry]) => sum + entry.costUSD, 0);
    const result: ResultMessage = {
      type: 'result',
      subtype,
      uuid: randomUUID(),
      session_id: session.sessionId,
      is_error: subtype !== 'success',
      duration_ms: Date.now() - started,
      duration_api_ms: totals.apiMs,
      num_turns: totals.rounds,
      ...(subtype === 'success' ? { result: response } : {}),
      ...(subtype === 'success' && structuredOutput !== undefined ? { structured_output: structuredOutput.value } : {}),
      stop_reason: subtype === 'success' ? (totals.lastStop ?? 'end_turn') : null,
      terminal_reason:
        subtype === 'success' ? 'completed' : overBudget ? 'budget_exhausted' : subtype === 'error_max_structured_output_retries' ? 'structured_output_retries' : hitMaxTurns ? 'max_turns' : interrupted ? 'aborted' : 'api_error',
      total_cost_usd: this.totalCost,
      usage: totals.usage,
      modelUsage: Object.fromEntries(this.models),
      permission_denials: totals.denials,
      ...(subtype === 'success'
        ? {}
        : {
            errors: overBudget
              ? [`Reached maximum budget ($${budget}): this run has cost $${this.totalCost.toFixed(4)}`]
              : subtype === 'error_max_structured_output_retries'
                ? [`The model did not produce output conforming to --json-schema after ${MAX_STRUCTURED_OUTPUT_ATTEMPTS} attempts (${STRUCTURED_OUTPUT_TOOL} calls with non-conforming input, or replies without the call).`]
                : hitMaxTurns
                ? [`Reached maximum number of turns (${flags.maxTurns})`]
                : interrupted
                  ? ['The turn was interrupted.', ...totals.errors]
                  : totals.errors,
          }),
    };
    out.result(result);
    this.lastFailed = result.is_error;
    return !result.is_error;
  }

  /** `--max-turns` reached by this many model calls. */
  private stoppedAtMaxTurns(rounds: number): boolean {
    return this.flags.maxTurns !== undefined && this.flags.maxTurns > 0 && rounds >= this.flags.maxTurns;
  }

  /** What the model calls of this process have cost so far (USD). */
  private spent(): number {
    let sum = 0;
    for (const entry of this.models.values()) sum += entry.costUSD;
    return sum;
  }

  /**
   * One model call into `modelUsage` and the cost: priced by the model that answered, or, when a
   * gateway answers under a name with no price, by the one asked for (`asked`).
   */
  private priceCall(message: { model?: string }, usage: AnthropicUsage, asked: string | undefined): void {
    const answered = message.model ?? this.model;
    this.addModelUsage(answered, usage, hasPrice(answered) ? answered : (asked ?? answered));
  }

  private addModelUsage(model: string, usage: AnthropicUsage, pricedAs = model): void {
    const entry = this.models.get(model) ?? {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      webSearchRequests: 0,
      costUSD: 0,
      contextWindow: this.session.getContextState()?.maxTokens ?? 0,
      maxOutputTokens: 0,
    };
    entry.inputTokens += usage.input_tokens;
    entry.outputTokens += usage.output_tokens;
    entry.cacheReadInputTokens += usage.cache_read_input_tokens;
    entry.cacheCreationInputTokens += usage.cache_creation_input_tokens;
    entry.costUSD += costUsd(pricedAs, usage);
    this.models.set(model, entry);
  }
}

function summarize(input: unknown): string {
  const text = JSON.stringify(input ?? {});
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** Queued user messages of a headless session, taken one turn at a time. */
interface QueuedMessage {
  text: string;
  /** Text and image blocks in order, when the message has images. */
  blocks?: Array<TextBlock | ImageBlock>;
  /** A message that cannot be sent: answered in its turn by an error result saying why. */
  refusal?: string;
  /** `--replay-user-messages`: the line to echo when the turn starts. */
  echo?: Record<string, unknown>;
}

class UserQueue {
  private readonly items: QueuedMessage[] = [];
  private waiter: ((value: QueuedMessage | undefined) => void) | undefined;
  private closed = false;

  get size(): number {
    return this.items.length;
  }

  push(message: QueuedMessage): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(message);
    } else this.items.push(message);
  }

  /** What is queued, oldest first. */
  snapshot(): string[] {
    return this.items.map((item) => item.text);
  }

  /** Drops what is queued (an `interrupt` with `cancel_queued`); returns it. */
  clear(): string[] {
    return this.items.splice(0).map((item) => item.text);
  }

  close(): void {
    this.closed = true;
    if (this.waiter && this.items.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(undefined);
    }
  }

  take(): Promise<QueuedMessage | undefined> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}

/**
 * The host side of headless mode: the SDK's hooks (registered in `initialize`) as callback
 * hooks, permission asks (`can_use_tool` with `--permission-prompt-tool stdio`, a refusal naming
 * the rule to add otherwise), and the control requests the host sends.
 */
class HostBridge {
  private session: Session | undefined;
  kernel: Kernel | undefined;

  constructor(
    private readonly control: ControlChannel,
    private readonly initialize: Record<string, unknown> | undefined,
    private readonly flags: CliFlags,
    private readonly io: CliIO,
  ) {}

  attach(session: Session): void {
    this.session = session;
  }

  /** Why the first `initialize`'s `agents` were refused (its answer is then this error). */
  private agentsError: string | undefined;

  /**
   * `initialize.agents` (the SDK's `agents` option, `{ name: { description, prompt, tools?,
   * model? } }`), read as `--agents` is: subagents of this run, composed before the session
   * starts so `system/init` lists them. A malformed definition is refused as a whole (named in
   * the `initialize` error answer, field and all); the rest of `initialize` still applies.
   */
  agents(): AgentDefinition[] {
    const read = this.readAgents(this.initialize?.agents);
    if ('error' in read) {
      this.agentsError = `${read.error} None of its agents were added; fix the definition and start a new query.`;
      this.io.stderr(`${this.agentsError}\n`);
      return [];
    }
    return read.definitions;
  }

  /** An `initialize` request's `agents`, checked as `--agents` is (warnings on stderr), or why they were refused. */
  private readAgents(agents: unknown): { definitions: AgentDefinition[] } | { error: string } {
    if (agents === undefined) return { definitions: [] };
    try {
      const { definitions, warnings } = parseAgentsFlag([JSON.stringify(agents)]);
      for (const warning of warnings) this.io.stderr(`${warning.replace('--agents:', 'initialize: agents:')}\n`);
      return { definitions };
    } catch (error) {
      if (!(error instanceof CliUsageError)) throw error;
      return { error: error.message.replace(/^Error: --agents/, 'initialize: agents') };
    }
  }

  /**
   * A further `initialize` once the session runs (the 2026 SDK's `reinitialize()`; Claude Code
   * takes it): its `agents` are checked as the first one's and added to the session's subagents
   * (a name already there is replaced; `--agents` and earlier ones stay), for the turns after
   * it. A bad definition is the same error answer and adds none. Its hooks and system prompt
   * are not read again: they are part of the composition.
   */
  private reinitialize(requestId: string, request: Record<string, unknown>, interactive: InteractiveSession): void {
    const read = this.readAgents(request.agents);
    if ('error' in read) {
      const message = `${read.error} None of its agents were added; fix the definition and send initialize again.`;
      this.io.stderr(`${message}\n`);
      this.control.respondError(requestId, message, 'invalid_request');
      return;
    }
    if (read.definitions.length === 0) {
      this.respondInitialize(requestId, interactive);
      return;
    }
    // Added before this returns: a user line after the request already sees them.
    if (!this.kernel || !addAgentDefinitions(this.kernel, read.definitions)) {
      this.control.respondError(requestId, 'initialize: agents cannot be added: this composition has no subagents plugin.', 'invalid_request');
      return;
    }
    void hostListings(this.kernel, interactive)
      .then((listings) => {
        this.listings = listings;
        this.respondInitialize(requestId, interactive);
      })
      .catch((error: unknown) => this.control.respondError(requestId, describeError(error)));
  }

  /** `initialize.hooks` → one callback hook per `hookCallbackIds` entry, asking the host. */
  hookConfigs(): Array<{ config: HooksConfig; source: { file: string } }> {
    const hooks = this.initialize?.hooks;
    if (!isRecord(hooks)) return [];
    const config: HooksConfig = {};
    for (const [event, groups] of Object.entries(hooks)) {
      if (!Array.isArray(groups)) continue;
      config[event as HookEventName] = groups.filter(isRecord).map((group) => ({
        ...(typeof group.matcher === 'string' ? { matcher: group.matcher } : {}),
        hooks: (Array.isArray(group.hookCallbackIds) ? group.hookCallbackIds : [])
          .filter((id): id is string => typeof id === 'string')
          .map((id) => ({
            type: 'callback' as const,
            id,
            ...(typeof group.timeout === 'number' && group.timeout > 0 ? { timeout: group.timeout } : {}),
            callback: (input: Record<string, unknown>, signal: AbortSignal) =>
              this.control.request({ subtype: 'hook_callback', callback_id: id, input: this.hookInput(event, input), tool_use_id: input.tool_use_id ?? null }, { signal }),
          })),
      }));
    }
    return [{ config, source: { file: 'Agent SDK hooks (initialize)' } }];
  }

  /** The hook input as Claude Code gives it to SDK callbacks. */
  private hookInput(event: string, input: Record<string, unknown>): Record<string, unknown> {
    return { hook_event_name: event, ...input, permission_mode: this.session?.getPermissionMode() ?? input.permission_mode };
  }

  approvalHandler(): ApprovalHandler {
    const viaHost = this.flags.permissionPromptTool === 'stdio' && this.flags.inputFormat === 'stream-json';
    const timeoutMs = Number(this.io.env.TESSERA_PERMISSION_PROMPT_TIMEOUT_MS) || DEFAULT_PERMISSION_TIMEOUT_MS;
    return {
      requestApproval: async (request: ApprovalRequest): Promise<ApprovalAnswer> => {
        if (!viaHost) return { behavior: 'deny', message: refusalMessage(request, this.flags.permissionPromptTool) };
        // The enforcer joins several suggested rules with ", " (e.g. for `pwd && ls`).
        const suggested = request.suggestedRule === undefined ? [] : splitToolList(request.suggestedRule);
        try {
          const answer = await this.control.request(
            {
              subtype: 'can_use_tool',
              tool_name: request.toolName,
              input: isRecord(request.input) ? request.input : {},
              tool_use_id: request.toolCallId,
              permission_suggestions: suggested.map(suggestion),
            },
            { timeoutMs, signal: request.signal },
          );
          if (answer.behavior === 'allow') {
            const remember = this.applyPermissionUpdates(answer.updatedPermissions, suggested);
            return { behavior: 'allow', ...(isRecord(answer.updatedInput) ? { updatedInput: answer.updatedInput } : {}), ...(remember ? { remember: true } : {}) };
          }
          const message = typeof answer.message === 'string' && answer.message !== '' ? answer.message : `The host denied ${request.toolName}.`;
          if (answer.interrupt === true) setImmediate(() => this.session?.abort());
          return { behavior: 'deny', message, ...(answer.interrupt === true ? { interrupt: true } : {}) };
        } catch (error) {
          const why = error instanceof ControlRequestError && error.reason === 'timeout' ? `the host did not answer the permission request within ${Math.round(timeoutMs / 1000)} s` : describeError(error);
          return { behavior: 'deny', message: `${request.toolName} was not approved: ${why}.` };
        }
      },
    };
  }

  /**
   * The host's `updatedPermissions` on an allow. Tessera can remember only the rules it
   * suggested, so it does when the host adds exactly those as allow rules; `setMode` changes the
   * session's mode. Anything else (deny rules, other destinations) is reported and not applied.
   */
  private applyPermissionUpdates(updates: unknown, suggested: readonly string[]): boolean {
    if (!Array.isArray(updates)) return false;
    let remember = false;
    for (const update of updates) {
      if (!isRecord(update)) continue;
      if (update.type === 'setMode' && typeof update.mode === 'string') {
        const mode = parsePermissionMode(update.mode);
        // A mode the session refuses (bypassPermissions without the opt-in flag) is not applied.
        if (mode && this.session?.allowsPermissionMode(mode)) this.session.setPermissionMode(mode);
        continue;
      }
      const rules = Array.isArray(update.rules) ? update.rules.filter(isRecord).map((rule) => (typeof rule.ruleContent === 'string' ? `${String(rule.toolName)}(${rule.ruleContent})` : String(rule.toolName))) : [];
      if (update.type === 'addRules' && update.behavior === 'allow' && rules.length > 0 && rules.every((rule) => suggested.includes(rule))) {
        remember = true;
        continue;
      }
      this.io.stderr(`warning: the host's permission update ${JSON.stringify(update)} is not supported here and was not applied\n`);
    }
    return remember;
  }

  /** `--system-prompt[-file]` / `--append-system-prompt[-file]`, or what `initialize` carries. */
  systemPromptOptions(settings: CliSettings): { systemPrompt?: string; appendSystemPrompt?: string } {
    const init = this.initialize;
    const fromInit = Array.isArray(init?.systemPrompt) ? (init.systemPrompt as unknown[]).filter((part): part is string => typeof part === 'string').join('\n') : typeof init?.systemPrompt === 'string' ? init.systemPrompt : undefined;
    const system = this.flags.systemPrompt ?? readFlagFile(this.flags.systemPromptFile, settings.cwd) ?? fromInit;
    const append = this.flags.appendSystemPrompt ?? readFlagFile(this.flags.appendSystemPromptFile, settings.cwd) ?? (typeof init?.appendSystemPrompt === 'string' ? init.appendSystemPrompt : undefined);
    if (system !== undefined) return { systemPrompt: append === undefined ? system : `${system}\n\n${append}` };
    return append === undefined ? {} : { appendSystemPrompt: append };
  }

  /** What the session offers (commands incl. skills and plugin commands, agents), once composed. */
  listings: HostListings | undefined;

  /** The answer to the first `initialize` (read before the session was composed). */
  answerInitialize(requestId: string, interactive: InteractiveSession, listings = this.listings): void {
    this.listings = listings;
    if (this.agentsError !== undefined) {
      this.control.respondError(requestId, this.agentsError, 'invalid_request');
      return;
    }
    this.respondInitialize(requestId, interactive);
  }

  private respondInitialize(requestId: string, interactive: InteractiveSession): void {
    const { listings } = this;
    this.control.respond(requestId, {
      commands: listings?.commands ?? interactive.listCommands().map((command) => ({ name: command.name, description: command.description ?? '', argumentHint: command.argumentHint ?? '' })),
      agents: listings?.agents ?? [],
      output_style: 'default',
      available_output_styles: ['default'],
      models: [],
      account: {},
      claude_code_version: TESSERA_VERSION,
    });
  }

  /** A `control_request` from the host. Always answered: success, or an error saying why. */
  handleRequest(message: Record<string, unknown>, line: number, interactive: InteractiveSession, session: Session, queue: UserQueue): void {
    const requestId = typeof message.request_id === 'string' ? message.request_id : undefined;
    const request = isRecord(message.request) ? message.request : undefined;
    // A malformed request is answered when it can be (the host waits on its id), else reported by line.
    if (requestId === undefined) {
      this.io.stderr(`stdin line ${line}: a control_request needs a "request_id" (a string) and a "request" object; it was skipped.\n`);
      return;
    }
    if (request === undefined) {
      this.control.respondError(requestId, `stdin line ${line}: a control_request needs a "request" object with a "subtype"; nothing was done.`, 'invalid_request');
      return;
    }
    try {
      switch (request.subtype) {
        case 'initialize':
          this.reinitialize(requestId, request, interactive);
          return;
        case 'interrupt': {
          const cancelled = request.cancel_queued === true ? queue.clear() : [];
          interactive.abort();
          this.control.respond(requestId, request.cancel_queued === true ? { cancelled, still_queued: [] } : { still_queued: queue.snapshot() });
          return;
        }
        case 'set_permission_mode': {
          const mode = parsePermissionMode(request.mode);
          if (mode === undefined) {
            this.control.respondError(requestId, `Invalid permission mode ${JSON.stringify(request.mode)}; use one of ${PERMISSION_MODES.join(', ')}.`, 'invalid_request');
            return;
          }
          if (!session.allowsPermissionMode(mode)) {
            this.control.respondError(requestId, `Permission mode ${mode} is not allowed in this session: start tessera with --allow-dangerously-skip-permissions (or --dangerously-skip-permissions) to switch to it.`, 'invalid_request');
            return;
          }
          session.setPermissionMode(mode);
          this.control.respond(requestId, { mode });
          return;
        }
        case 'set_model':
          session.setModel(typeof request.model === 'string' ? resolveModelAlias(request.model) : undefined);
          this.control.respond(requestId, {});
          return;
        case 'get_context_usage': {
          const state = interactive.getContextState();
          this.control.respond(requestId, {
            categories: [{ name: 'Messages', tokens: state.usedTokens, color: 'purple' }],
            totalTokens: state.usedTokens,
            maxTokens: state.maxTokens,
            rawMaxTokens: state.maxTokens,
            percentage: state.usedPercentage,
            gridRows: [],
            model: session.getModel() ?? '',
            memoryFiles: [],
            mcpTools: [],
          });
          return;
        }
        case 'mcp_status':
          this.control.respond(requestId, {
            mcpServers: (this.kernel ? mcpServerStates(this.kernel) : []).map((server) => ({ name: server.name, status: server.status, ...(server.error ? { error: server.error } : {}), scope: server.scope, tools: server.toolNames.map((name) => ({ name })) })),
          });
          return;
        case 'set_max_thinking_tokens':
        case 'apply_flag_settings':
        case 'stop_task':
          this.control.respond(requestId, {});
          return;
        default:
          this.control.respondError(requestId, `Unsupported control request subtype: ${String(request.subtype)}`, 'unsupported_request');
      }
    } catch (error) {
      this.control.respondError(requestId, describeError(error));
    }
  }
}


function readFlagFile(path: string | undefined, cwd: string): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(resolve(cwd, path), 'utf8');
  } catch (error) {
    throw new CliUsageError(`Error: cannot read ${path}: ${describeError(error)}`);
  }
}

/** A suggested rule as the SDK's `PermissionUpdate`. */
function suggestion(rule: string): Record<string, unknown> {
  const match = /^([^(]+)(?:\(([\s\S]*)\))?$/.exec(rule);
  return {
    type: 'addRules',
    rules: [{ toolName: match?.[1] ?? rule, ...(match?.[2] === undefined ? {} : { ruleContent: match[2] }) }],
    behavior: 'allow',
    destination: 'session',
  };
}

/** Print mode has no one to ask: the call is refused, and the message says how to allow it. */
export function refusalMessage(request: ApprovalRequest, promptTool: string | undefined): string {
  const rule = request.suggestedRule ?? request.toolName;
  const why = promptTool === 'stdio' ? 'the host cannot be asked without --input-format stream-json' : 'print mode has no one to ask';
  return `Permission to use ${request.toolName} was denied: this call needs approval and ${why}. To allow it, add "${rule}" to permissions.allow in .claude/settings.json or .tessera/settings.json, or pass --allowedTools "${rule}".`;
}

/** `text` as one shell word (single-quoted when it holds anything but plain path characters). */
function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
