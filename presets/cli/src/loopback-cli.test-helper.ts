import { spawn } from 'node:child_process';
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

  /** The stored sessions (JSONL files under the agent dir's sessions folder). */
  sessionFiles(): string[] {
    return readdirSync(join(this.home, '.tessera', 'agent', 'sessions'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
      .map((entry) => join(entry.parentPath, entry.name));
  }

  close(): void {
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
