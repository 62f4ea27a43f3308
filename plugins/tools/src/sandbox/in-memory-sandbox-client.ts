import { posix } from 'node:path';
import type { ISandboxClient, ISandboxFileStat, ISandboxRunOptions, ISandboxRunResult } from './sandbox-client.js';

export type InMemoryCommandHandler = (
  command: string,
  options: ISandboxRunOptions,
  sandbox: InMemorySandboxClient,
) => ISandboxRunResult | Promise<ISandboxRunResult>;

export interface InMemorySandboxClientOptions {
  /** Initial files: absolute path → content. */
  files?: Readonly<Record<string, string | Uint8Array>>;
  /**
   * Runs commands. Default: a tiny interpreter that knows `pwd`, `cd DIR`, `echo TEXT` and
   * `cat FILE` and answers anything else with exit code 127.
   */
  run?: InMemoryCommandHandler;
}

interface StoredFile {
  content: Uint8Array;
  mtimeMs: number;
}

function checkPath(path: string): string {
  if (!posix.isAbsolute(path) || path.includes('\0')) throw new TypeError(`Sandbox paths must be absolute POSIX paths, got "${path}".`);
  return posix.normalize(path);
}

function ancestors(path: string): string[] {
  const found: string[] = [];
  for (let dir = posix.dirname(path); ; dir = posix.dirname(dir)) {
    found.push(dir);
    if (dir === '/') return found;
  }
}

/**
 * A sandbox held in memory: the contract adapter for tests and demos of the sandbox port, and
 * a reference for what a provider adapter must do. Records every command it was asked to run.
 */
export class InMemorySandboxClient implements ISandboxClient {
  private files = new Map<string, StoredFile>();
  private directories = new Set<string>(['/']);
  private readonly snapshots = new Map<string, { files: Map<string, StoredFile>; directories: Set<string> }>();
  private clock = 0;
  readonly commands: Array<{ command: string; options: ISandboxRunOptions }> = [];

  constructor(private readonly options: InMemorySandboxClientOptions = {}) {
    for (const [path, content] of Object.entries(options.files ?? {})) this.put(path, content);
  }

  private put(path: string, content: string | Uint8Array): void {
    const normalized = checkPath(path);
    if (this.directories.has(normalized)) throw new Error(`EISDIR: ${normalized} is a directory`);
    for (const dir of ancestors(normalized)) this.directories.add(dir);
    this.clock += 1;
    const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : new Uint8Array(content);
    this.files.set(normalized, { content: bytes, mtimeMs: this.clock });
  }

  async run(command: string, options: ISandboxRunOptions = {}): Promise<ISandboxRunResult> {
    this.commands.push({ command, options });
    if (this.options.run) return this.options.run(command, options, this);
    const cwd = options.cwd ?? '/';
    const [name, ...rest] = command.trim().split(/\s+/);
    const argument = rest.join(' ');
    if (name === 'pwd') return { exitCode: 0, stdout: `${cwd}\n`, stderr: '', cwd };
    if (name === 'echo') return { exitCode: 0, stdout: `${argument}\n`, stderr: '', cwd };
    if (name === 'cd') {
      const target = posix.resolve(cwd, argument || '/');
      return this.directories.has(target)
        ? { exitCode: 0, stdout: '', stderr: '', cwd: target }
        : { exitCode: 1, stdout: '', stderr: `cd: ${argument}: No such file or directory\n`, cwd };
    }
    if (name === 'cat') {
      const file = this.files.get(posix.resolve(cwd, argument));
      return file
        ? { exitCode: 0, stdout: new TextDecoder().decode(file.content), stderr: '', cwd }
        : { exitCode: 1, stdout: '', stderr: `cat: ${argument}: No such file or directory\n`, cwd };
    }
    return { exitCode: 127, stdout: '', stderr: `${name}: command not found (InMemorySandboxClient runs only pwd, cd, echo and cat)\n`, cwd };
  }

  async readFile(path: string): Promise<Uint8Array> {
    const file = this.files.get(checkPath(path));
    if (!file) throw Object.assign(new Error(`ENOENT: no such file in sandbox: ${path}`), { code: 'ENOENT' });
    return new Uint8Array(file.content);
  }

  async writeFile(path: string, content: string | Uint8Array): Promise<void> {
    this.put(path, content);
  }

  async stat(path: string): Promise<ISandboxFileStat | undefined> {
    const normalized = checkPath(path);
    const file = this.files.get(normalized);
    if (file) return { size: file.content.byteLength, isDirectory: false, mtimeMs: file.mtimeMs };
    return this.directories.has(normalized) ? { size: 0, isDirectory: true } : undefined;
  }

  async mkdir(path: string): Promise<void> {
    const normalized = checkPath(path);
    if (this.files.has(normalized)) throw new Error(`EEXIST: ${normalized} is a file`);
    this.directories.add(normalized);
    for (const dir of ancestors(normalized)) this.directories.add(dir);
  }

  async snapshot(): Promise<string> {
    const id = `memsnap-${this.snapshots.size + 1}`;
    this.snapshots.set(id, { files: new Map(this.files), directories: new Set(this.directories) });
    return id;
  }

  async restore(snapshotId: string): Promise<void> {
    const saved = this.snapshots.get(snapshotId);
    if (!saved) throw new Error(`Unknown sandbox snapshot "${snapshotId}".`);
    this.files = new Map(saved.files);
    this.directories = new Set(saved.directories);
  }

  /** Every file path, sorted (for assertions). */
  listFiles(): string[] {
    return [...this.files.keys()].sort();
  }
}
