import { spawn } from 'node:child_process';

/** Claude Code's `statusLine` setting: a command given session JSON on stdin; its first line is shown. */
export interface StatusLineCommand {
  type?: 'command';
  command: string;
  padding?: number;
}

/** What a status-line command is told (Claude Code's field names). */
export interface StatusLineInput {
  session_id: string;
  session_name?: string;
  cwd: string;
  model: { id: string; display_name: string };
  workspace: { current_dir: string; project_dir: string };
  version: string;
  permission_mode: string;
  cost: { total_cost_usd: number; total_duration_ms: number };
  context_window: { used_percentage: number; context_window_size: number };
}

const MIN_INTERVAL_MS = 300;
const TIMEOUT_MS = 2000;

/**
 * Runs the user's status-line command at most every 300 ms (a request inside the window is
 * folded into one run at its end; a newer run cancels one still going) and keeps its first
 * output line. A failing or silent command leaves the last line in place; it never throws.
 */
export class StatusLineRunner {
  private line = '';
  private lastRun = 0;
  private timer: NodeJS.Timeout | undefined;
  private child: ReturnType<typeof spawn> | undefined;
  private latest: StatusLineInput | undefined;
  private closed = false;

  constructor(
    private readonly command: StatusLineCommand,
    private readonly cwd: string,
    private readonly changed: () => void,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get text(): string {
    return this.line;
  }

  request(input: StatusLineInput): void {
    this.latest = input;
    if (this.closed || this.timer) return;
    const wait = Math.max(0, this.lastRun + MIN_INTERVAL_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, wait);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.child?.kill('SIGKILL');
  }

  private run(): void {
    const input = this.latest;
    if (!input || this.closed) return;
    this.lastRun = Date.now();
    this.child?.kill('SIGKILL');
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(this.command.command, { shell: true, cwd: this.cwd, env: this.env, stdio: ['pipe', 'pipe', 'ignore'] });
    } catch {
      return;
    }
    this.child = child;
    let output = '';
    const timeout = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    timeout.unref();
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (output.length < 4096) output += chunk;
    });
    child.on('error', () => clearTimeout(timeout));
    child.on('close', () => {
      clearTimeout(timeout);
      if (this.child !== child) return;
      this.child = undefined;
      const first = output.split('\n')[0]?.replace(/\r$/, '') ?? '';
      if (first !== '' && first !== this.line) {
        this.line = first;
        this.changed();
      }
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(JSON.stringify(input));
  }
}
