import { main } from './main.js';

/** What an in-process `main` run wrote, and its exit code. */
export interface MainRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI's `main(argv)` in this process, in `where.cwd` with `where.home` as the home
 * folder (stdin a TTY, so no prompt is read from it), collecting what it writes.
 */
export async function runMainIn(where: { cwd: string; home: string }, argv: string[], env: Record<string, string> = {}, stdoutIsTTY = false): Promise<MainRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    cwd: where.cwd,
    home: where.home,
    env: { PATH: process.env.PATH, HOME: where.home, TESSERA_SESSION_LOG: '0', ...env },
    stdinIsTTY: true,
    stdoutIsTTY,
  });
  return { code, stdout, stderr };
}
