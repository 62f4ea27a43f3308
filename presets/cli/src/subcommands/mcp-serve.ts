import { resolve } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { CommandContribution } from '@tessera/contracts';
import { SystemCommandExecutor } from '@tessera/kernel';
import { mcpServerTransport, serveMcpStdio } from '@tessera/plugin-transport-mcp';
import { ApprovalRouter } from '@tessera/session-hub';
import { CliUsageError, parseArgs, type CliFlags } from '../args.js';
import { composeHost } from '../host-sessions.js';
import type { Subcommand } from '../io.js';
import { TESSERA_VERSION } from '../version.js';
import { untilStopped } from './shared.js';

export const MCP_SERVE_USAGE = `Usage: tessera mcp serve [options]

Serves this Tessera agent as an MCP server over stdio (stdout carries the protocol; messages go
to stderr). Tools: prompt { prompt, sessionId? } runs a turn and answers with the final text and
the session id; abort { sessionId } stops a running turn; command_<name> { args?, sessionId? }
runs a model-invocable slash command. Permission asks go to the client as elicitation forms when
it supports them; otherwise they are denied with the rule to add to permissions.allow.
The server stops when stdin ends (or on SIGTERM / SIGINT); its sessions are saved. When the
client stops reading stdout, it stops the same way with exit code 1.

Options (as for a tessera run):
  --cwd <dir>                     Work in this directory (every session opened over MCP)
  --provider <profile>            Provider profile from settings ("demo": the built-in demo model)
  --model <model>                 Model for new sessions
  --permission-mode <mode>        default (or manual), acceptEdits, plan, bypassPermissions, dontAsk (not auto)
  --allowedTools <tools...>       Rules that run without asking, e.g. "Bash(npm test:*)" Edit
  --disallowedTools <tools...>    Rules that are refused
  --append-system-prompt <text>   Append to the system prompt of every session
  --settings <file|json>          One more settings layer
  --mcp-config <files...>         MCP servers the agent itself uses
  --no-session-persistence        Do not save sessions

Claude Code (.mcp.json):
  { "mcpServers": { "tessera": { "command": "tessera", "args": ["mcp", "serve"] } } }
`;

/** Flags of a tessera run that mean nothing for a server; named in a warning. */
const NOT_FOR_SERVE: ReadonlyArray<[keyof CliFlags, string]> = [
  ['print', '-p'],
  ['continue', '--continue'],
  ['resume', '--resume'],
  ['sessionId', '--session-id'],
  ['outputFormat', '--output-format'],
  ['maxTurns', '--max-turns'],
];

/**
 * `tessera mcp serve [options]`: composes the CLI preset once (as `tessera acp` does) and serves
 * it over stdio with `@tessera/plugin-transport-mcp`. Exit code 0 when the client went away or a
 * signal stopped the server; 1 when the host could not be composed or stdout's reader went away.
 */
export const runMcpServeCommand: Subcommand = async (argv, io) => {
  let flags: CliFlags;
  try {
    flags = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof CliUsageError)) throw error;
    io.stderr(`tessera mcp serve: ${error.message}\n`);
    return 2;
  }
  if (flags.help) {
    io.stdout(MCP_SERVE_USAGE);
    return 0;
  }
  if (flags.positionals.length > 0) {
    io.stderr(`tessera mcp serve: unexpected argument ${JSON.stringify(flags.positionals[0])} (prompts come from the MCP client)\nRun tessera mcp serve --help for the options.\n`);
    return 2;
  }
  for (const [key, name] of NOT_FOR_SERVE) {
    const value = flags[key];
    if (value !== undefined && value !== false && !(key === 'outputFormat' && value === 'text')) io.stderr(`warning: tessera mcp serve ignores ${name}\n`);
  }
  if (!io.stdin) {
    io.stderr('tessera mcp serve: no stdin to read the MCP client from.\n');
    return 1;
  }

  const approvals = new ApprovalRouter();
  let host;
  try {
    // One local client that started this process: an explicit bypass flag is the user's choice.
    host = await composeHost({ flags, io, approvals, allowBypassPermissions: flags.dangerouslySkipPermissions || flags.permissionMode === 'bypassPermissions' });
  } catch (error) {
    io.stderr(`tessera mcp serve: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const cwd = resolve(io.cwd, flags.cwd ?? '.');
  const commands = new SystemCommandExecutor(host.kernel.getAll(CommandContribution));
  const mcp = mcpServerTransport({
    sessions: host.sessions,
    approvals,
    cwd,
    name: 'tessera',
    version: TESSERA_VERSION,
    // The only client is the one that started this process: it may continue its stored sessions.
    allowResume: true,
    commands: () => commands.listCommands(),
    instructions: `Tessera, a coding agent working in ${cwd}. Call prompt to give it a task; pass the sessionId it returns to continue.`,
  });
  const stdout = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      io.stdout(String(chunk));
      done();
    },
  });
  let stdoutGone = false;
  try {
    const server = await serveMcpStdio(mcp, { stdin: io.stdin as Readable, stdout });
    io.stderr(`tessera mcp serve: serving ${cwd} over stdio\n`);
    stdoutGone = (await untilStopped(server.closed, io.stdoutClosed)) === 'stdout-closed';
  } finally {
    await mcp.stop();
    await host.close();
  }
  return stdoutGone ? 1 : 0;
};
