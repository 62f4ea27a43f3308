import { describeError, type PermissionMode } from '@tessera/contracts';
import { serveAcp } from '@tessera/plugin-transport-acp';
import { ApprovalRouter } from '@tessera/session-hub';
import { CliUsageError, parseArgs } from '../args.js';
import { composeHost } from '../host-sessions.js';
import type { Subcommand } from '../io.js';
import { TESSERA_VERSION } from '../version.js';
import { untilStopped } from './shared.js';

export const ACP_USAGE = `Usage: tessera acp [options]

Runs Tessera as an Agent Client Protocol agent on stdin/stdout, for editors that speak ACP
(Zed and others): the editor starts this command and opens sessions in its workspace.
stdout carries only the protocol; diagnostics go to stderr. Ends when stdin closes or on
SIGTERM/SIGINT, saving the sessions; when the editor stops reading stdout, it ends the same
way with exit code 1.

Options (as for a run; prompts come from the editor):
  --provider <profile>                Provider profile from settings ("demo": the built-in demo model)
  --model <model>                     Model for every session
  --permission-mode <mode>            Starting mode: default (or manual), acceptEdits, plan, dontAsk (not auto)
  --allow-dangerously-skip-permissions  Also offer bypassPermissions as a mode
  --allowedTools / --disallowedTools  Permission rules for this run
  --settings <file|json>              One more settings layer
  --mcp-config <files...>             MCP servers (servers sent by the editor are not used)
  --plugin-dir <paths...>             Bundle plugins for this run
  --append-system-prompt <text>       Appended to every session's system prompt
  --no-session-persistence            Do not save sessions
  -h, --help                          Show this help

Zed (~/.config/zed/settings.json):
  "agent_servers": { "Tessera": { "type": "custom", "command": "tessera", "args": ["acp"] } }
`;

const MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'dontAsk'];

/**
 * `tessera acp`: composes the CLI preset once (`composeHost`) with an `ApprovalRouter`, so each
 * session's permission asks go to the editor that owns it, and serves ACP over the process's
 * stdio until the editor closes stdin or the process is told to stop.
 */
export const runAcpCommand: Subcommand = async (argv, io) => {
  const flags = parseArgs(argv);
  if (flags.help) {
    io.stdout(ACP_USAGE);
    return 0;
  }
  if (flags.positionals.length > 0) throw new CliUsageError(`error: tessera acp takes no prompt (got "${flags.positionals.join(' ')}"); the editor sends prompts.\nRun tessera acp --help for the options.`);
  if (!io.stdin) throw new CliUsageError('error: tessera acp needs stdin: it is started by an editor that speaks ACP on stdin/stdout.');

  const approvals = new ApprovalRouter();
  const allowBypassPermissions = flags.allowDangerouslySkipPermissions || flags.dangerouslySkipPermissions;
  const host = await composeHost({ flags, io, approvals, allowBypassPermissions });
  const log = (message: string): void => io.stderr(`${message}\n`);
  const server = serveAcp({
    sessions: host.sessions,
    approvals,
    input: io.stdin,
    output: (text) => io.stdout(text),
    agentInfo: { name: 'tessera', title: 'Tessera', version: TESSERA_VERSION },
    modes: allowBypassPermissions ? [...MODES, 'bypassPermissions'] : MODES,
    log,
  });

  // The editor stopped reading our stdout (EPIPE): nothing we answer can reach it, so it ends as
  // on a signal (sessions saved), quietly, exit 1 as print mode does.
  let stdoutGone = false;
  try {
    stdoutGone = (await untilStopped(server.closed, io.stdoutClosed)) === 'stdout-closed';
  } finally {
    try {
      await server.close();
    } catch (error) {
      log(`tessera acp: ${describeError(error)}`);
    }
    await host.close();
  }
  return stdoutGone ? 1 : 0;
};
