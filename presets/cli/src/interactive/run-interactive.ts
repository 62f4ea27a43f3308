import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describeError } from '@tessera/contracts';
import { createKernel, InteractiveSession, type Kernel } from '@tessera/kernel';
import { PromptHistory } from '@tessera/plugin-prompt-history';
import { processTerminal, TerminalApprovals, TesseraTui, type StatusLineCommand, type Terminal } from '@tessera/plugin-tui';
import type { CliFlags } from '../args.js';
import type { CliIO } from '../io.js';
import { DEMO_MODEL_ID } from '../demo-model.js';
import { loadCliPreset } from '../load-cli-preset.js';
import { chooseProvider, resolveModelAlias } from '../provider-selection.js';
import { loadCliSettings, type CliSettings } from '../settings.js';
import { readSettingsForEdit, writeSettings } from '../subcommands/shared.js';
import { TESSERA_VERSION } from '../version.js';
import { costUsd } from '../print/sdk-messages.js';
import { isDirectory, resolveResume, withModel } from '../print/headless.js';
import { runFirstRunSetup } from './first-run.js';

export interface InteractiveRunOptions {
  /** The terminal to draw on; default the process's own. */
  terminal?: Terminal;
}

/**
 * `tessera` with no `-p` in a terminal: the interactive UI over one `InteractiveSession` (or
 * the next one after `/resume` or `/clear`) until the user leaves. Returns the exit code.
 */
export async function runInteractive(flags: CliFlags, io: CliIO, options: InteractiveRunOptions = {}): Promise<number> {
  const cwd = resolve(io.cwd, flags.cwd ?? '.');
  if (!isDirectory(cwd)) {
    io.stderr(`Error: the working directory ${cwd} does not exist or is not a directory${flags.cwd === undefined ? '' : ' (--cwd)'}.\n`);
    return 1;
  }
  let settings: CliSettings;
  try {
    settings = loadCliSettings({ cwd, home: io.home, env: io.env, flags });
  } catch (error) {
    io.stderr(`${describeError(error)}\n`);
    return 1;
  }
  for (const warning of settings.warnings) io.stderr(`${warning}\n`);
  const terminal = options.terminal ?? processTerminal();

  let choice = chooseProvider(flags.provider, settings.providerSettings, io.env);
  if (choice.kind === 'none') {
    if (flags.provider !== undefined) {
      io.stderr(`${choice.message}\n`);
      return 1;
    }
    const configured = await runFirstRunSetup({ terminal, io });
    if (configured === undefined) return 1;
    settings = loadCliSettings({ cwd, home: io.home, env: io.env, flags: configured === 'demo' ? { ...flags, provider: 'demo' } : flags });
    choice = chooseProvider(configured === 'demo' ? 'demo' : undefined, settings.providerSettings, io.env);
    if (choice.kind === 'none') {
      io.stderr(`${choice.message}\n`);
      return 1;
    }
  }

  const approvals = new TerminalApprovals();
  let kernel: Kernel | undefined;
  const sessionOptions = (extra: Partial<ConstructorParameters<typeof InteractiveSession>[0]>): InteractiveSession =>
    new InteractiveSession({
      kernel: kernel!,
      cwd,
      ...(flags.model === undefined ? {} : { model: resolveModelAlias(flags.model)! }),
      ...(settings.permissionMode === undefined ? {} : { permissionMode: settings.permissionMode }),
      ...(flags.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: flags.appendSystemPrompt }),
      ...(flags.systemPrompt === undefined ? {} : { systemPrompt: flags.systemPrompt }),
      sessionOptions: { ...(flags.maxTurns === undefined ? {} : { maxTurns: flags.maxTurns }) },
      ...extra,
    });
  const readyChoice = choice;
  // Composed while the prompt is already on screen.
  const starting = (async (): Promise<InteractiveSession> => {
    kernel = await createKernel({
      plugins: await loadCliPreset({
        cwd,
        home: io.home,
        ...(settings.settingsFile === undefined ? {} : { settingsFile: settings.settingsFile }),
        provider: readyChoice.kind === 'demo' ? { kind: 'demo', delayMs: Number(io.env.TESSERA_DEMO_DELAY_MS ?? 0) || 0 } : { kind: 'profile', name: readyChoice.name, profile: withModel(readyChoice, flags) },
        permissions: settings.permissions,
        hookFiles: settings.hookFiles,
        approvalHandler: approvals,
        ...(settings.tools === undefined ? {} : { tools: settings.tools }),
        sessionPersistence: flags.sessionPersistence,
        sessionLog: io.env.TESSERA_SESSION_LOG !== '0',
      }),
    });
    const resumeId = await resolveResume(kernel, flags, cwd);
    const interactive = sessionOptions({
      ...(flags.sessionId === undefined ? {} : { sessionId: flags.sessionId }),
      ...(resumeId === undefined ? {} : { resumeSessionId: resumeId }),
      ...(flags.continue ? { continueMostRecent: true } : {}),
      ...(flags.forkSession ? { forkSession: true } : {}),
    });
    await interactive.whenReady();
    return interactive;
  })();

  const history = (): readonly string[] => {
    try {
      return kernel === undefined ? [] : kernel.get(PromptHistory).getRecent(200).map((entry) => entry.prompt);
    } catch {
      return [];
    }
  };
  const statusLine = settings.loaded.config.statusLine as { type?: string; command?: unknown; padding?: number } | undefined;
  const modelLabel = (): string => (readyChoice.kind === 'demo' ? DEMO_MODEL_ID : (app?.getSession()?.getSession().getModel() ?? (readyChoice.kind === 'profile' ? readyChoice.profile.model : undefined) ?? 'default'));
  let exitCode = 0;
  let resolveExit: () => void = () => undefined;
  const exited = new Promise<void>((done) => (resolveExit = done));
  let app: TesseraTui | undefined;
  app = new TesseraTui({
    terminal,
    session: starting,
    approvals,
    ...(settings.permissionMode === undefined ? {} : { initialMode: settings.permissionMode }),
    cwd,
    version: TESSERA_VERSION,
    modelLabel,
    allowBypass: flags.dangerouslySkipPermissions === true || flags.allowDangerouslySkipPermissions === true,
    ...(statusLine && typeof statusLine.command === 'string' ? { statusLine: { command: statusLine.command, ...(statusLine.padding === undefined ? {} : { padding: statusLine.padding }) } satisfies StatusLineCommand } : {}),
    ...(gitBranch(cwd) === undefined ? {} : { gitBranch: gitBranch(cwd)! }),
    costOf: (usage) => costUsd(modelLabel(), { input_tokens: usage.input, output_tokens: usage.output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }),
    saveAllowRule: async (rule) => {
      const file = join(cwd, '.tessera', 'settings.local.json');
      const current = readSettingsForEdit(file);
      const permissions = (current.permissions ?? {}) as { allow?: unknown };
      const allow = Array.isArray(permissions.allow) ? permissions.allow.filter((entry): entry is string => typeof entry === 'string') : [];
      if (!allow.includes(rule)) writeSettings(file, [{ path: ['permissions', 'allow'], value: [...allow, rule] }]);
      return '.tessera/settings.local.json';
    },
    listSessions: async () => (await InteractiveSession.listResumableSessions(kernel!, cwd)).filter((stored) => stored.cwd === cwd),
    switchSession: async (id) => {
      const previous = app!.getSession()!;
      const next = sessionOptions(id === undefined ? {} : { resumeSessionId: id });
      await next.whenReady();
      await previous.shutdown({ reason: id === undefined ? 'clear' : 'other' }).catch(() => undefined);
      return next;
    },
    recentPrompts: history,
    openPicker: flags.resume === true,
    onExit: (code) => {
      exitCode = code;
      resolveExit();
    },
  });
  const onSignal = (): void => {
    exitCode = 130;
    resolveExit();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  let failed: unknown;
  try {
    await app.start();
    await exited;
  } catch (error) {
    failed = error;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    app.stop();
    const session = app.getSession();
    await session?.shutdown({ reason: 'prompt_input_exit' }).catch((error: unknown) => io.stderr(`Could not save the session: ${describeError(error)}\n`));
    await kernel?.shutdown().catch(() => undefined);
    if (session) io.stdout(`\nResume this session with: tessera -r ${session.getSessionId()}\n`);
  }
  if (failed !== undefined) {
    io.stderr(`Could not start: ${describeError(failed)}\n`);
    return 1;
  }
  return exitCode;
}

/** The branch in `.git/HEAD` of the repository holding `cwd` (no git process). */
export function gitBranch(cwd: string): string | undefined {
  let dir = cwd;
  for (;;) {
    try {
      const head = readFileSync(join(dir, '.git', 'HEAD'), 'utf8').trim();
      const match = /^ref: refs\/heads\/(.+)$/.exec(head);
      return match ? match[1] : head.slice(0, 8);
    } catch {
      // Not here (or a worktree's .git file): go up.
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
