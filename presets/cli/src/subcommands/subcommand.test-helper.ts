import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { CliIO, Subcommand } from '../io.js';

/** Fresh temp folders for one test (removed when it finishes), e.g. `tempDirs('config', 'home', 'cwd')`. */
export function tempDirs<const K extends string>(prefix: string, ...names: K[]): Record<K, string> {
  const dirs = Object.fromEntries(names.map((name) => [name, mkdtempSync(join(tmpdir(), `tessera-${prefix}-${name}-`))])) as Record<K, string>;
  onTestFinished(() => {
    for (const dir of Object.values<string>(dirs)) rmSync(dir, { recursive: true, force: true });
  });
  return dirs;
}

/** Runs a subcommand with captured output. */
export async function runSubcommand(
  command: Subcommand,
  argv: readonly string[],
  where: { cwd: string; home: string; env?: Record<string, string> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: where.cwd, env: where.env ?? {}, home: where.home };
  const code = await command(argv, io);
  return { code, stdout, stderr };
}
