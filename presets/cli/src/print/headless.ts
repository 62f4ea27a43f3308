import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { describeError, PERMISSION_MODES, type AgentDefinition, compareText, SessionStore } from '@tessera/contracts';
import { createKernel, InteractiveSession, type Kernel, type Session } from '@tessera/kernel';
import type { CliFlags } from '../args.js';
import { checkSessionIdFlags, CliUsageError } from '../args.js';
import type { CliIO } from '../io.js';
import { loadCliPreset } from '../load-cli-preset.js';
import { DEMO_MODEL_ID } from '../demo-model.js';
import { loadRunSettings } from '../settings.js';
import { chooseProvider, resolveModelAlias, type ProviderChoice } from '../provider-selection.js';
import { TESSERA_VERSION } from '../version.js';
import { ControlChannel } from './control-channel.js';
import { HostBridge } from './host-bridge.js';
import { Output } from './output.js';
import { readPrompt } from './read-prompt.js';
import { StdinLines } from './stdin-lines.js';
import { readStreamJsonInput, readUntilStart } from './stream-json-input.js';
import { parseJsonSchemaFlag, STRUCTURED_OUTPUT_INSTRUCTIONS, STRUCTURED_OUTPUT_TOOL, structuredOutputPlugin, type StructuredOutputSchema } from './structured-output.js';
import { TurnRunner } from './turn-runner.js';
import { UserQueue } from './user-queue.js';
import { runPresetOptions } from '../run-preset-options.js';
import { cliCommandHostAdapters, hostListings, loadedPluginsForInit, mcpServerStates, type HostListings } from '../host-adapters.js';
import { cliMcpOptions } from '../mcp-setup.js';
import { McpClients } from '@tessera/plugin-mcp/plugin';
import { offeredTools } from '@tessera/plugin-permissions';

export { refusalMessage } from './host-bridge.js';

/** Exit codes as Claude Code's: 0 success, 1 failure; signals as the shell reports them. */
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

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
  const { initialize, early } = lines ? await readUntilStart(lines) : { initialize: undefined, early: [] };

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
      const reader = readStreamJsonInput(lines, early, { out, control, host, queue, interactive, session, replayUserMessages: flags.replayUserMessages });
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
      // A later `initialize` that was the input's last line is answered before the session ends.
      await host.answered();
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

/** `text` as one shell word (single-quoted when it holds anything but plain path characters). */
function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
