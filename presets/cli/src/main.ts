import { homedir } from 'node:os';
import { CliUsageError, parseArgs, USAGE, wantsStreamInput } from './args.js';
import { parseAgentsFlag } from './inline-agents.js';
import type { CliIO, Subcommand } from './io.js';
import { TESSERA_VERSION } from './version.js';

/** Subcommands, loaded only when used so the print path stays small. */
const SUBCOMMANDS: Record<string, () => Promise<Subcommand>> = {
  sessions: async () => (await import('./subcommands/sessions.js')).runSessionsCommand,
  history: async () => (await import('./subcommands/history.js')).runHistoryCommand,
  config: async () => (await import('./subcommands/config.js')).runConfigCommand,
  provider: async () => (await import('./subcommands/provider.js')).runProviderCommand,
  doctor: async () => (await import('./subcommands/doctor.js')).runDoctorCommand,
  plugin: async () => (await import('./subcommands/plugin.js')).runPluginCommand,
  serve: async () => (await import('./subcommands/serve.js')).runServeCommand,
  acp: async () => (await import('./subcommands/acp.js')).runAcpCommand,
  worker: async () => (await import('./subcommands/worker.js')).runWorkerCommand,
  mcp: async () => {
    const { runMcpServeCommand } = await import('./subcommands/mcp-serve.js');
    return (argv, io) => {
      if (argv[0] === 'serve') return runMcpServeCommand(argv.slice(1), io);
      io.stderr('usage: tessera mcp serve [options]   (serve this agent as an MCP server over stdio; see tessera mcp serve --help)\n');
      return Promise.resolve(2);
    };
  },
};

let stdoutGone: AbortController | undefined;

/**
 * Aborted when the reader of stdout has gone (EPIPE: `| head`, a host that closed the pipe).
 * Listening once turns Node's unhandled-error stack dump into a quiet end of the run.
 */
function stdoutClosed(): AbortSignal {
  if (stdoutGone === undefined) {
    const gone = new AbortController();
    stdoutGone = gone;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
      gone.abort();
    });
  }
  return stdoutGone.signal;
}

/** The process's own stdio, working directory, environment and home, as `CliIO`. */
export function processIO(): CliIO {
  const closed = stdoutClosed();
  return {
    // Once the reader has gone, output has nowhere to go.
    stdout: (text) => void (closed.aborted || process.stdout.write(text)),
    stdoutClosed: closed,
    stderr: (text) => void process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
    home: process.env.HOME || homedir(),
    stdin: process.stdin,
    stdinIsTTY: process.stdin.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
  };
}

/** The `tessera` command: argv (without `node` and the script) → exit code. */
export async function main(argv: readonly string[], given: Partial<CliIO> = {}): Promise<number> {
  const io: CliIO = { ...processIO(), ...given };
  const first = argv[0];
  try {
    if (first !== undefined && Object.hasOwn(SUBCOMMANDS, first)) return await (await SUBCOMMANDS[first]!())(argv.slice(1), io);
    const streamInput = wantsStreamInput(argv);
    const flags = parseArgs(argv, { ignoreUnknown: streamInput, onUnknown: (flag) => io.stderr(`warning: ignoring unknown option ${flag}\n`) });
    if (flags.version) {
      io.stdout(`${TESSERA_VERSION} (Tessera)\n`);
      return 0;
    }
    if (flags.help) {
      io.stdout(USAGE);
      return 0;
    }
    // `--agents` is checked before anything starts (a bad one exits 1 naming the field), in every mode.
    if (flags.agents.length > 0) for (const warning of parseAgentsFlag(flags.agents).warnings) io.stderr(`${warning}\n`);
    const headless = flags.print || streamInput || io.stdinIsTTY === false || io.stdoutIsTTY === false;
    if (!headless) {
      const { runInteractive } = await import('./interactive/run-interactive.js');
      return await runInteractive(flags, io);
    }
    if (!flags.print && !streamInput && io.stdinIsTTY !== false && io.stdoutIsTTY === false) {
      io.stderr('stdout is not a terminal, so tessera runs in print mode (as with -p).\n');
    }
    const { runHeadless } = await import('./print/headless.js');
    return await runHeadless(flags, io);
  } catch (error) {
    if (error instanceof CliUsageError) {
      io.stderr(`${error.message}\n`);
      return error.exitCode;
    }
    io.stderr(`tessera: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}
