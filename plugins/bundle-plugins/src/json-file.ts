import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
export function writeJsonObject(file: string, value: Record<string, unknown>): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temporary, file);
}

/** Reads, changes and writes one JSON object file, keeping every key it does not touch. */
export function updateJsonObject(file: string, change: (value: Record<string, unknown>) => void): void {
  const value = readJsonObject(file) ?? {};
  change(value);
  writeJsonObject(file, value);
}
