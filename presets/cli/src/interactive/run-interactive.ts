import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describeError } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import { processTerminal, TerminalApprovals, TesseraTui, type StatusLineCommand, type Terminal } from '@tessera/plugin-tui';
import { checkSessionIdFlags, CliUsageError, type CliFlags } from '../args.js';
import type { CliIO } from '../io.js';
import { DEMO_MODEL_ID } from '../demo-model.js';
import { chooseProvider } from '../provider-selection.js';
import { loadCliSettings, loadRunSettings } from '../settings.js';
import { readSettingsForEdit, writeSettings } from '../subcommands/shared.js';
import { TESSERA_VERSION } from '../version.js';
import { costUsd } from '../print/sdk-messages.js';
import type { ComposedSession } from './compose-session.js';
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
  // `TESSERA_TIMING=1`: where start-up time goes, as `+ms phase` lines on stderr (redirect it).
  const mark = io.env.TESSERA_TIMING === '1' ? (phase: string) => io.stderr(`[timing] +${Math.round(performance.now())} ms: ${phase}\n`) : () => undefined;
  mark('interactive');
  // Before anything is drawn: a bad --session-id is a usage error (exit 1), as in print mode.
  checkSessionIdFlags(flags);
  // As Claude Code's, the budget is a print-mode flag: refused rather than silently not enforced.
  if (flags.maxBudgetUsd !== undefined) throw new CliUsageError('Error: --max-budget-usd works only in print mode; add -p (or --print), or leave the flag out.');
  if (flags.jsonSchema !== undefined) throw new CliUsageError('Error: --json-schema works only in print mode; add -p (or --print), or leave the flag out.');
  const run = loadRunSettings(flags, io);
  if ('exitCode' in run) return run.exitCode;
  const { cwd } = run;
  let { settings } = run;
  mark('settings loaded');
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
  const readyChoice = choice;
  let composed: ComposedSession | undefined;
  // Composed while the prompt is already on screen: the kernel's modules load after the first paint.
  const starting = (async (): Promise<InteractiveSession> => {
    const { composeSession } = await import('./compose-session.js');
    composed = await composeSession({ flags, io, cwd, settings, choice: readyChoice, approvals, show: (message) => app?.announce(message) });
    mark('session ready');
    return composed.interactive;
  })();
  const history = (): readonly string[] => composed?.recentPrompts() ?? [];
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
    costOf: (usage) => costUsd(modelLabel(), { input_tokens: usage.input, output_tokens: usage.output, cache_read_input_tokens: usage.cacheRead, cache_creation_input_tokens: usage.cacheWrite }),
    saveAllowRule: async (rule) => {
      const file = join(cwd, '.tessera', 'settings.local.json');
      const current = readSettingsForEdit(file);
      const permissions = (current.permissions ?? {}) as { allow?: unknown };
      const allow = Array.isArray(permissions.allow) ? permissions.allow.filter((entry): entry is string => typeof entry === 'string') : [];
      if (!allow.includes(rule)) writeSettings(file, [{ path: ['permissions', 'allow'], value: [...allow, rule] }]);
      return '.tessera/settings.local.json';
    },
    listSessions: async () => (composed ? composed.listSessions(cwd) : []),
    switchSession: async (id) => {
      const previous = app!.getSession()!;
      const next = await composed!.open(id);
      await previous.shutdown({ reason: id === undefined ? 'clear' : 'other' }).catch(() => undefined);
      return next;
    },
    recentPrompts: history,
    reloadPlugins: async () => (composed ? composed.reloadPlugins() : 'The session is still starting.'),
    pluginManager: async () => (composed ? composed.listPlugins() : 'The session is still starting.'),
    // Loaded only when used: the start-up path does not pay for it.
    resetSettings: async () => (await import('../host-adapters.js')).resetUserSettings(io.home),
    openPicker: flags.resume === true,
    onExit: (code) => {
      exitCode = code;
      resolveExit();
    },
  });
  let hungUp = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    exitCode = signal === 'SIGTERM' ? 143 : 129;
    hungUp ||= signal === 'SIGHUP';
    resolveExit();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  let failed: unknown;
  try {
    const started = app.start();
    mark('first paint');
    await started;
    void askMcpApproval(app, composed!);
    await exited;
  } catch (error) {
    failed = error;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    app.stop();
    const session = app.getSession();
    await session?.shutdown({ reason: 'prompt_input_exit' }).catch((error: unknown) => io.stderr(`Could not save the session: ${describeError(error)}\n`));
    await composed?.kernel.shutdown().catch(() => undefined);
    if (session) io.stdout(`\nResume this session with: tessera -r ${session.getSessionId()}\n`);
  }
  if (failed !== undefined) {
    io.stderr(`Could not start: ${describeError(failed)}\n`);
    return 1;
  }
  // The terminal went away (SIGHUP): the session is saved; Node's exit would try to restore the
  // vanished terminal's mode and abort on the error (a Node 20 assertion), so leave at once.
  if (hungUp) process.kill(process.pid, 'SIGKILL');
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

/** Claude Code's question for servers in the project's `.mcp.json` that were never approved. */
async function askMcpApproval(app: TesseraTui, composed: ComposedSession): Promise<void> {
  const names = await composed.mcpNeedingApproval();
  if (names.length === 0) return;
  const answer = await app.pick(`New MCP server${names.length === 1 ? '' : 's'} found in .mcp.json: ${names.join(', ')}`, [
    { value: 'all', label: 'Use this and all future MCP servers in this project' },
    { value: 'these', label: `Use ${names.length === 1 ? 'this MCP server' : 'these MCP servers'}` },
    { value: 'none', label: 'Continue without using them' },
  ]);
  if (answer !== 'all' && answer !== 'these') return;
  try {
    const file = composed.approveMcp(names, answer === 'all');
    app.announce(`Approved ${names.join(', ')} (saved to ${file}); they start before the next prompt.`);
  } catch (error) {
    app.announce(`Could not save the approval: ${describeError(error)}`);
  }
}
