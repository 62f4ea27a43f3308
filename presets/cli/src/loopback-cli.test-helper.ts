import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer } from '@tessera/test-servers';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');

/** What a run of the built CLI wrote; `out` is stdout's JSON lines (empty when it has none). */
export interface LoopbackRun {
  code: number | null;
  stdout: string;
  stderr: string;
  out: Array<Record<string, any>>;
}

/** A running `tessera` in stream-json mode (`LoopbackCli.host`). */
export interface LoopbackHost {
  /** Output lines so far, parsed. */
  seen: Array<Record<string, any>>;
  stderr(): string;
  /** Writes a stdin line (end it with a newline: `userLine`, `jsonLine`). */
  send(line: string): void;
  /** Closes stdin: the CLI ends after the turn it runs. */
  end(): void;
  /** Resolves with the first line, seen or to come, that passes `test`; rejects if the process exits first. */
  waitFor(test: (message: Record<string, any>) => boolean): Promise<Record<string, any>>;
  exit: Promise<number | null>;
  /** Ends the process at once (a test's clean-up). */
  kill(): void;
}

/**
 * The built `tessera` bin in a fresh home and workspace, against a loopback fake Anthropic API
 * (the real wire format). `start()` in `beforeEach`, `close()` in `afterEach`.
 */
export class LoopbackCli {
  readonly server = new FakeAnthropicServer();
  readonly home = mkdtempSync(join(tmpdir(), 'tessera-loopback-home-'));
  readonly workspace = mkdtempSync(join(tmpdir(), 'tessera-loopback-ws-'));

  static async start(): Promise<LoopbackCli> {
    const cli = new LoopbackCli();
    await cli.server.listen();
    return cli;
  }

  /** Runs `tessera <argv>` with `input` on stdin (then closed) to its exit. */
  async run(argv: readonly string[], input = ''): Promise<LoopbackRun> {
    const child = spawn(process.execPath, [BIN, ...argv], {
      cwd: this.workspace,
      env: { PATH: process.env.PATH, HOME: this.home, TESSERA_SESSION_LOG: '0', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: this.server.baseURL },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(input);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const out = stdout
      .split('\n')
      .filter((line) => line.trim().startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, any>);
    return { code, stdout, stderr, out };
  }

  /**
   * `tessera <SDK_FLAGS> <argv>` left running, as an SDK host drives it: `send` writes stdin
   * lines while it runs, `waitFor` resolves with the first output line (seen or to come) that
   * passes the test.
   */
  host(argv: readonly string[]): LoopbackHost {
    const child = spawn(process.execPath, [BIN, ...SDK_FLAGS, ...argv], {
      cwd: this.workspace,
      env: { PATH: process.env.PATH, HOME: this.home, TESSERA_SESSION_LOG: '0', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: this.server.baseURL },
    });
    const host = driveStreamJson(child);
    this.hosts.push(host);
    return host;
  }

  private readonly hosts: LoopbackHost[] = [];

  /** The stored sessions (JSONL files under the agent dir's sessions folder). */
  sessionFiles(): string[] {
    return readdirSync(join(this.home, '.tessera', 'agent', 'sessions'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
      .map((entry) => join(entry.parentPath, entry.name));
  }

  close(): void {
    for (const host of this.hosts.splice(0)) host.kill();
    this.server.close();
    rmSync(this.home, { recursive: true, force: true });
    rmSync(this.workspace, { recursive: true, force: true });
  }
}

/** One stream-json stdin line. */
export const jsonLine = (value: unknown): string => `${JSON.stringify(value)}\n`;

/** A stream-json user message line, as the Agent SDK writes it. */
export const userLine = (content: unknown): string => jsonLine({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' });

/** Flags the Agent SDK always passes. */
export const SDK_FLAGS = ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json'] as const;

/**
 * Reads a spawned `tessera` in stream-json mode: each stdout line is parsed (a line that is not
 * JSON fails the test), kept in `seen` and passed to `onMessage` (a host answering control
 * requests), and `waitFor` resolves with the first line, seen or to come, that passes its test.
 */
export function driveStreamJson(child: ChildProcessWithoutNullStreams, onMessage?: (message: Record<string, any>) => void): LoopbackHost {
  const seen: Array<Record<string, any>> = [];
  const waiters: Array<{ test: (message: Record<string, any>) => boolean; resolve: (message: Record<string, any>) => void; reject: (error: Error) => void }> = [];
  let buffer = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      const message = JSON.parse(line) as Record<string, any>;
      seen.push(message);
      onMessage?.(message);
      for (const waiter of [...waiters]) {
        if (!waiter.test(message)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  });
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      exited = true;
      // A line waited for that never came: fail now, naming what the process said, not at the test's timeout.
      for (const waiter of waiters.splice(0)) waiter.reject(new Error(`tessera exited (${code}) before the line waited for; stderr: ${stderr.slice(-500)}`));
      resolve(code);
    }),
  );
  return {
    seen,
    stderr: () => stderr,
    send: (line) => void child.stdin.write(line),
    end: () => void child.stdin.end(),
    waitFor: (test) =>
      new Promise((resolve, reject) => {
        const found = seen.find(test);
        if (found) resolve(found);
        else if (exited) reject(new Error(`tessera exited before the line waited for; stderr: ${stderr.slice(-500)}`));
        else waiters.push({ test, resolve, reject });
      }),
    exit,
    kill: () => void child.kill('SIGKILL'),
  };
}
