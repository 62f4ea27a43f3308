import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../bash-tool.js';
import { ToolSessionState } from '../session-state.js';
import { tempDir, text, toolContext } from '../test-support.js';
import {
  E2BSandboxClient,
  E2B_KILLED_EXIT_CODE,
  type E2BCommandHandleLike,
  type E2BCommandResultLike,
  type E2BCommandStartOptionsLike,
  type E2BEntryInfoLike,
  type E2BFileRequestOptionsLike,
  type E2BSandboxLike,
} from './e2b-sandbox-client.js';

// A stand-in for an e2b `Sandbox`. Commands run in a real local bash (the SDK runs
// `bash -l -c CMD`), so `cd`, exit codes, output and kills behave for real; files live in memory.
// Errors carry the SDK's class names, since the adapter recognises them by name and shape.

class SdkError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** Mirrors the SDK's `CommandExitError`: a `SandboxError` exposing the result through getters. */
class FakeCommandExitError extends Error {
  constructor(private readonly result: E2BCommandResultLike) {
    super(result.error);
    this.name = 'CommandExitError';
  }
  get exitCode(): number {
    return this.result.exitCode;
  }
  get stdout(): string {
    return this.result.stdout;
  }
  get stderr(): string {
    return this.result.stderr;
  }
}

class FakeCommandHandle implements E2BCommandHandleLike {
  private out = '';
  private err = '';
  private sdkDeadlineHit = false;
  exited = false;
  killCalls = 0;
  readonly waitRejections: unknown[] = [];
  private readonly done: Promise<E2BCommandResultLike>;

  constructor(
    private readonly child: ChildProcess,
    timeoutMs: number | undefined,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.out += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.err += chunk.toString('utf8')));
    // Like the SDK's stream deadline: a TimeoutError once `timeoutMs` passes (0 disables it).
    const deadline = timeoutMs ? setTimeout(() => {
      this.sdkDeadlineHit = true;
      this.killGroup();
    }, timeoutMs) : undefined;
    this.done = new Promise((resolve, reject) => {
      child.on('close', (code, signal) => {
        this.exited = true;
        clearTimeout(deadline);
        if (this.sdkDeadlineHit) return reject(new SdkError('TimeoutError', '[deadline_exceeded] the operation timed out'));
        const result = { exitCode: code ?? -1, stdout: this.out, stderr: this.err, ...(signal ? { error: `signal: ${signal}` } : {}) };
        if (result.exitCode !== 0) reject(new FakeCommandExitError({ ...result, error: result.error ?? `exit status ${result.exitCode}` }));
        else resolve(result);
      });
    });
    this.done.catch((error: unknown) => this.waitRejections.push(error));
  }

  get stdout(): string {
    return this.out;
  }
  get stderr(): string {
    return this.err;
  }
  wait(): Promise<E2BCommandResultLike> {
    return this.done;
  }
  async kill(): Promise<boolean> {
    this.killCalls += 1;
    if (this.exited) return false;
    this.killGroup();
    return true;
  }
  async disconnect(): Promise<void> {}

  private killGroup(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

interface FakeEntry {
  content: Uint8Array;
  modifiedTime: Date;
}

interface FakeSandboxOptions {
  sandboxId?: string;
  /** Thrown by `commands.run` instead of starting anything. */
  startError?: Error;
  /** Returned by `wait()` (as a rejection) instead of running bash. */
  waitError?: Error;
  /** Run nothing; `wait()` rejects with the SDK's TimeoutError once its `timeoutMs` passes. */
  onlySdkDeadline?: boolean;
  /** Thrown by every `files.*` call. */
  filesError?: Error;
  snapshots?: boolean;
}

class FakeSandbox implements E2BSandboxLike {
  readonly sandboxId: string;
  readonly runs: Array<{ command: string; options: E2BCommandStartOptionsLike }> = [];
  readonly handles: FakeCommandHandle[] = [];
  readonly fileCalls: Array<{ op: string; path: string; options?: E2BFileRequestOptionsLike; data?: unknown }> = [];
  readonly entries = new Map<string, FakeEntry>();
  readonly directories = new Set<string>(['/']);
  snapshotCount = 0;
  readonly createSnapshot?: () => Promise<{ snapshotId: string; names: string[] }>;

  constructor(private readonly fake: FakeSandboxOptions = {}) {
    this.sandboxId = fake.sandboxId ?? 'sbx-test';
    if (fake.snapshots) {
      this.createSnapshot = async () => {
        this.snapshotCount += 1;
        return { snapshotId: `${this.sandboxId}-snap-${this.snapshotCount}`, names: [] };
      };
    }
  }

  readonly commands = {
    run: async (command: string, options: E2BCommandStartOptionsLike): Promise<E2BCommandHandleLike> => {
      this.runs.push({ command, options });
      if (this.fake.startError) throw this.fake.startError;
      if (this.fake.onlySdkDeadline) {
        const expiry = new Promise<never>((_resolve, reject) =>
          setTimeout(() => reject(new SdkError('TimeoutError', '[deadline_exceeded] the operation timed out')), options.timeoutMs),
        );
        return { stdout: 'partial\n', stderr: '', wait: () => expiry, kill: async () => false };
      }
      if (this.fake.waitError) {
        const failure = this.fake.waitError;
        return { stdout: '', stderr: '', wait: () => Promise.reject(failure), kill: async () => false };
      }
      const child = spawn('/bin/bash', ['-c', command], {
        cwd: options.cwd,
        env: { ...process.env, ...options.envs },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const handle = new FakeCommandHandle(child, options.timeoutMs);
      this.handles.push(handle);
      return handle;
    },
  };

  private parents(path: string): void {
    for (let dir = posix.dirname(path); !this.directories.has(dir); dir = posix.dirname(dir)) this.directories.add(dir);
  }

  private record(op: string, path: string, options?: E2BFileRequestOptionsLike, data?: unknown): void {
    this.fileCalls.push({ op, path, ...(options ? { options } : {}), ...(data !== undefined ? { data } : {}) });
    if (this.fake.filesError) throw this.fake.filesError;
  }

  private missing(path: string): SdkError {
    return new SdkError('FileNotFoundError', `path '${path}' does not exist`);
  }

  readonly files = {
    read: async (path: string, options: E2BFileRequestOptionsLike & { format: 'bytes' }): Promise<Uint8Array> => {
      this.record('read', path, options);
      const entry = this.entries.get(path);
      if (!entry) throw this.missing(path);
      return new Uint8Array(entry.content);
    },
    write: async (path: string, data: string | ArrayBuffer, options?: E2BFileRequestOptionsLike): Promise<unknown> => {
      this.record('write', path, options, data);
      this.parents(path);
      const content = typeof data === 'string' ? new TextEncoder().encode(data) : new Uint8Array(data.slice(0));
      this.entries.set(path, { content, modifiedTime: new Date(1_700_000_000_000 + this.entries.size) });
      return { name: posix.basename(path), type: 'file', path };
    },
    getInfo: async (path: string, options?: E2BFileRequestOptionsLike): Promise<E2BEntryInfoLike> => {
      this.record('getInfo', path, options);
      const entry = this.entries.get(path);
      if (entry) return { type: 'file', size: entry.content.byteLength, modifiedTime: entry.modifiedTime };
      if (this.directories.has(path)) return { type: 'dir', size: 4096, modifiedTime: new Date(1_600_000_000_000) };
      throw this.missing(path);
    },
    makeDir: async (path: string, options?: E2BFileRequestOptionsLike): Promise<boolean> => {
      this.record('makeDir', path, options);
      if (this.entries.has(path) || this.directories.has(path)) return false;
      this.parents(path);
      this.directories.add(path);
      return true;
    },
  };
}

const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

let host: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir: host, cleanup } = await tempDir()));
afterEach(async () => cleanup());

describe('E2BSandboxClient.run', () => {
  it('runs a command in the background and reports output, exit code and cwd', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    const result = await client.run('echo hello', { cwd: host });
    expect(result).toEqual({ exitCode: 0, stdout: 'hello\n', stderr: '', cwd: host });
    expect(sandbox.runs[0]?.options).toMatchObject({ background: true, cwd: host });
  });

  it('turns the SDK CommandExitError for a non-zero exit into a normal result', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    const result = await client.run('echo out; echo err >&2; exit 3', { cwd: host });
    expect(result).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
    expect(sandbox.handles[0]?.waitRejections[0]).toBeInstanceOf(FakeCommandExitError);
  });

  it('reports the cwd after a cd and keeps the command exit code', async () => {
    await mkdir(join(host, 'sub'));
    const client = new E2BSandboxClient(new FakeSandbox());
    const moved = await client.run('cd sub && false', { cwd: host });
    expect(moved).toEqual({ exitCode: 1, stdout: '', stderr: '', cwd: join(host, 'sub') });
    const next = await client.run('pwd', { cwd: moved.cwd });
    expect(next.stdout).toBe(`${join(host, 'sub')}\n`);
  });

  it('strips the cwd report even when the output has no final newline', async () => {
    const client = new E2BSandboxClient(new FakeSandbox());
    expect(await client.run('printf abc', { cwd: host })).toEqual({ exitCode: 0, stdout: 'abc', stderr: '', cwd: host });
    expect(await client.run('true', { cwd: host })).toEqual({ exitCode: 0, stdout: '', stderr: '', cwd: host });
  });

  it('uses a fresh marker per call and leaves look-alike output alone', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    const lookalike = 'echo __TESSERA_CWD_0123__/tmp__TESSERA_CWD_END_0123__';
    expect((await client.run(lookalike, { cwd: host })).stdout).toBe('__TESSERA_CWD_0123__/tmp__TESSERA_CWD_END_0123__\n');
    await client.run('true', { cwd: host });
    const nonces = sandbox.runs.map((run) => /__TESSERA_CWD_([0-9a-f]{32})__/.exec(run.command)?.[1]);
    expect(nonces[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(nonces[1]).toMatch(/^[0-9a-f]{32}$/);
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  it('passes quotes and syntax errors through to the shell unchanged', async () => {
    const client = new E2BSandboxClient(new FakeSandbox());
    expect((await client.run(`echo 'it'"'"'s' "a b"`, { cwd: host })).stdout).toBe("it's a b\n");
    const broken = await client.run('if then', { cwd: host });
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toContain('syntax error');
    expect(broken.cwd).toBe(host);
  });

  it('passes env, cwd, user and a backstop SDK timeout through', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox, { user: 'root', killGraceMs: 500 });
    const env = { GREETING: 'hi', DROPPED: undefined } as unknown as Record<string, string>;
    const result = await client.run('echo "$GREETING"', { cwd: host, env, timeoutMs: 4_000 });
    expect(result.stdout).toBe('hi\n');
    // toStrictEqual: an `undefined` env value must be dropped, not sent.
    expect(sandbox.runs[0]?.options).toStrictEqual({ background: true, cwd: host, envs: { GREETING: 'hi' }, user: 'root', timeoutMs: 4_500 });
  });

  it('kills a command at its deadline and reports timedOut with the output so far', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    const started = Date.now();
    const result = await client.run('echo started; sleep 10', { cwd: host, timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toEqual({ exitCode: E2B_KILLED_EXIT_CODE, stdout: 'started\n', stderr: '', timedOut: true });
    expect(sandbox.handles[0]?.killCalls).toBe(1);
  });

  it('maps the SDK TimeoutError at the deadline to timedOut', async () => {
    // With no grace the SDK's stream deadline equals the adapter's and may fire first.
    const sandbox = new FakeSandbox({ onlySdkDeadline: true });
    const client = new E2BSandboxClient(sandbox, { killGraceMs: 0, defaultTimeoutMs: 300 });
    const result = await client.run('sleep 10', { cwd: host });
    expect(sandbox.runs[0]?.options.timeoutMs).toBe(300);
    expect(result).toEqual({ exitCode: E2B_KILLED_EXIT_CODE, stdout: 'partial\n', stderr: '', timedOut: true });
  });

  it('kills the command when the signal aborts', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const result = await client.run('echo begin; sleep 10', { cwd: host, signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toEqual({ exitCode: E2B_KILLED_EXIT_CODE, stdout: 'begin\n', stderr: '' });
    expect(sandbox.handles[0]?.killCalls).toBe(1);
  });

  it('does not start a command whose signal is already aborted', async () => {
    const sandbox = new FakeSandbox();
    const result = await new E2BSandboxClient(sandbox).run('echo never', { signal: AbortSignal.abort() });
    expect(result.exitCode).toBe(E2B_KILLED_EXIT_CODE);
    expect(sandbox.runs).toEqual([]);
  });

  it('surfaces SDK failures with the sandbox id and what to check', async () => {
    const gone = new SdkError('SandboxNotFoundError', 'Sandbox is probably not running anymore');
    const notStarted = new E2BSandboxClient(new FakeSandbox({ sandboxId: 'sbx-42', startError: gone }));
    const startFailure = await notStarted.run('ls', { cwd: '/missing' }).then(
      () => expect.unreachable('run should reject'),
      (error: unknown) => error as Error,
    );
    expect(startFailure.message).toContain('E2B sandbox sbx-42 could not start a command in "/missing"');
    expect(startFailure.message).toContain('SandboxNotFoundError: Sandbox is probably not running anymore');
    expect(startFailure.cause).toBe(gone);

    // A TimeoutError long before the command's deadline means the sandbox went away, not a slow command.
    const expired = new SdkError('TimeoutError', '[unavailable] sandbox timeout');
    const lost = new E2BSandboxClient(new FakeSandbox({ sandboxId: 'sbx-42', waitError: expired }));
    await expect(lost.run('make', { timeoutMs: 60_000 })).rejects.toThrow(/sbx-42 lost the command "make".*TimeoutError.*sandbox\.setTimeout/);
  });
});

describe('E2BSandboxClient files', () => {
  it('reads bytes and maps a missing file to ENOENT', async () => {
    const sandbox = new FakeSandbox();
    sandbox.entries.set('/w/a.bin', { content: new Uint8Array([0, 255, 10]), modifiedTime: new Date() });
    const client = new E2BSandboxClient(sandbox, { user: 'root' });
    expect([...(await client.readFile('/w/a.bin'))]).toEqual([0, 255, 10]);
    expect(sandbox.fileCalls[0]).toEqual({ op: 'read', path: '/w/a.bin', options: { user: 'root', format: 'bytes' } });
    await expect(client.readFile('/w/none')).rejects.toMatchObject({ code: 'ENOENT', message: 'ENOENT: no such file in sandbox: /w/none' });
    await expect(client.readFile('w/a.bin')).rejects.toThrow('absolute POSIX paths');
  });

  it('writes strings as-is and bytes as exactly the viewed ArrayBuffer range', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    await client.writeFile('/w/deep/t.txt', 'héllo');
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
    await client.writeFile('/w/b.bin', backing.subarray(2, 5));
    expect(sandbox.fileCalls[0]?.data).toBe('héllo');
    const sent = sandbox.fileCalls[1]?.data;
    expect(sent).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(sent as ArrayBuffer)]).toEqual([1, 2, 3]);
    expect(decode(await client.readFile('/w/deep/t.txt'))).toBe('héllo');
    expect(await client.stat('/w/deep')).toMatchObject({ isDirectory: true });
  });

  it('stats files, directories and missing paths', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    await client.writeFile('/w/f.txt', 'four');
    expect(await client.stat('/w/f.txt')).toEqual({ size: 4, isDirectory: false, mtimeMs: 1_700_000_000_000 });
    expect(await client.stat('/w')).toEqual({ size: 4096, isDirectory: true, mtimeMs: 1_600_000_000_000 });
    expect(await client.stat('/w/nothing')).toBeUndefined();
  });

  it('does not mistake a vanished sandbox for a missing file', async () => {
    const gone = new SdkError('SandboxNotFoundError', 'Sandbox sbx-9 not found');
    const client = new E2BSandboxClient(new FakeSandbox({ sandboxId: 'sbx-9', filesError: gone }));
    await expect(client.stat('/w')).rejects.toThrow('Could not stat /w in E2B sandbox sbx-9 (SandboxNotFoundError: Sandbox sbx-9 not found).');
    await expect(client.readFile('/w/a')).rejects.toThrow('Could not read /w/a in E2B sandbox sbx-9');
    await expect(client.writeFile('/w/a', 'x')).rejects.toThrow('Could not write /w/a in E2B sandbox sbx-9');
  });

  it('creates directories, accepts existing ones and refuses a file in the way', async () => {
    const sandbox = new FakeSandbox();
    const client = new E2BSandboxClient(sandbox);
    await client.mkdir('/w/x/y');
    expect(await client.stat('/w/x')).toMatchObject({ isDirectory: true });
    await expect(client.mkdir('/w/x/y')).resolves.toBeUndefined();
    await client.writeFile('/w/file', 'x');
    await expect(client.mkdir('/w/file')).rejects.toThrow('EEXIST: /w/file is a file in E2B sandbox sbx-test');
  });
});

describe('E2BSandboxClient snapshots', () => {
  it('offers neither snapshot nor restore when the SDK object and options lack them', () => {
    const client = new E2BSandboxClient(new FakeSandbox());
    expect(client.snapshot).toBeUndefined();
    expect(client.restore).toBeUndefined();
    expect('snapshot' in client || 'restore' in client).toBe(false);
  });

  it('snapshots through createSnapshot and restores by switching to a new sandbox', async () => {
    const first = new FakeSandbox({ sandboxId: 'sbx-1', snapshots: true });
    const second = new FakeSandbox({ sandboxId: 'sbx-2', snapshots: true });
    second.entries.set('/w/a', { content: new TextEncoder().encode('from snapshot'), modifiedTime: new Date() });
    const requested: string[] = [];
    const replaced: E2BSandboxLike[] = [];
    const client = new E2BSandboxClient(first, {
      restoreSandbox: async (id) => (requested.push(id), second),
      onSandboxReplaced: (previous) => void replaced.push(previous),
    });
    const id = await client.snapshot!();
    expect(id).toBe('sbx-1-snap-1');
    await client.restore!(id);
    expect(requested).toEqual(['sbx-1-snap-1']);
    expect(client.sandbox).toBe(second);
    expect(replaced).toEqual([first]);
    expect(decode(await client.readFile('/w/a'))).toBe('from snapshot');
  });

  it('keeps the current sandbox when restoring fails', async () => {
    const first = new FakeSandbox({ sandboxId: 'sbx-1' });
    const client = new E2BSandboxClient(first, {
      restoreSandbox: async () => {
        throw new SdkError('SandboxError', 'snapshot not found');
      },
    });
    expect(client.snapshot).toBeUndefined();
    await expect(client.restore!('snap-x')).rejects.toThrow(
      'Could not start a sandbox from snapshot "snap-x" (SandboxError: snapshot not found); the client keeps using E2B sandbox sbx-1.',
    );
    expect(client.sandbox).toBe(first);
  });
});

describe('Bash tool on E2BSandboxClient', () => {
  it('carries a cd over to the next call', async () => {
    await mkdir(join(host, 'src'));
    const client = new E2BSandboxClient(new FakeSandbox());
    // The fake keeps files in memory while its commands run in real bash: the directory must
    // exist for both (Bash checks a remembered directory before running in it).
    await client.mkdir(join(host, 'src'));
    const tool = bashTool({ state: new ToolSessionState(), sandbox: { client, root: host } });
    await tool.execute({ command: 'cd src' }, toolContext(host));
    const where = await tool.execute({ command: 'pwd' }, toolContext(host));
    expect(text(where)).toBe(join(host, 'src'));
    const failed = await tool.execute({ command: 'exit 4' }, toolContext(host));
    expect(failed).toMatchObject({ success: false, errorCode: 'exit_code', data: { exitCode: 4 } });
  });
});
