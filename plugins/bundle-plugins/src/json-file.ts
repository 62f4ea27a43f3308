import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseJsonText } from '@tessera/formats';
import { BundlePluginError } from './errors.js';

/** A JSON object file, or `undefined` when it does not exist. Broken JSON is an error naming the line. */
export function readJsonObject(file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new BundlePluginError('settings_write_failed', `Cannot read ${file}: ${(error as Error).message}`, { file }, error);
  }
  const json = parseJsonText(text, file);
  if (!json.ok) {
    const where = json.diagnostic.line === undefined ? '' : `:${json.diagnostic.line}`;
    throw new BundlePluginError('settings_write_failed', `${file}${where}: ${json.diagnostic.message} Fix the file, then run the command again.`, { file });
  }
  if (json.value === null || typeof json.value !== 'object' || Array.isArray(json.value)) {
    throw new BundlePluginError('settings_write_failed', `${file} must hold a JSON object; fix it, then run the command again.`, { file });
  }
  return json.value as Record<string, unknown>;
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
export function writeJsonObject(file: string, value: Record<string, unknown>, options: { mode?: number } = {}): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${randomUUID()}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, options.mode === undefined ? {} : { mode: options.mode });
  renameSync(temporary, file);
}

/**
 * Reads, changes and writes one JSON object file, keeping every key it does not touch. The
 * whole read-change-write holds `<file>.lock`, so two processes (a CLI install while a session
 * runs `/plugin install`) cannot both read the old content and lose one change.
 */
export function updateJsonObject(file: string, change: (value: Record<string, unknown>) => void, options: { mode?: number } = {}): void {
  withFileLock(file, () => {
    const value = readJsonObject(file) ?? {};
    change(value);
    writeJsonObject(file, value, options);
  });
}

/** How long a lock may be held before another process takes it over (a holder that crashed). */
const STALE_LOCK_MS = 10_000;
/** How long to wait for a live holder before giving up with a message. */
const WAIT_MS = 15_000;

/**
 * Runs `work` while holding `<file>.lock`. A lock file created with O_EXCL (`wx`) is the
 * simplest correct choice here: a rename cannot detect that someone else wrote in between, so
 * write-by-rename would still need a lock to merge safely. Every update takes milliseconds, so
 * a lock older than STALE_LOCK_MS belongs to a process that died and is removed. The callers
 * are synchronous, so waiting blocks the thread in short sleeps.
 */
export function withFileLock<T>(file: string, work: () => T): T {
  const lock = `${file}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  for (let attempt = 0; ; attempt += 1) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new BundlePluginError('settings_write_failed', `Cannot create ${lock}: ${(error as Error).message}. Check that its folder is writable.`, { file: lock }, error);
    }
    const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
    if (since !== undefined && Date.now() - since > STALE_LOCK_MS) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new BundlePluginError('settings_write_failed', `${file} is locked by another Tessera process (${lock}). Try again; if no other Tessera is running, delete ${lock}.`, { file: lock });
    }
    sleep(Math.min(2 + attempt * 2, 50));
  }
  try {
    return work();
  } finally {
    rmSync(lock, { force: true });
  }
}

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

function sleep(milliseconds: number): void {
  Atomics.wait(SLEEPER, 0, 0, milliseconds);
}
