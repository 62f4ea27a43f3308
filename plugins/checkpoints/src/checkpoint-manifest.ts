import { compareText } from '@tessera/contracts';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';
import type { IEditCheckpointSummary } from '@tessera/contracts';
import { CheckpointManifestError } from './checkpoint-errors.js';

/**
 * The on-disk record of one turn checkpoint: `<checkpoint dir>/manifest.json`. Pre-images sit
 * beside it under `files/`, each under a generated name (`files/0001`), never under a name
 * derived from the captured path.
 *
 * While the turn is open, each capture is appended to `captures.jsonl` beside it (one line,
 * written after the pre-image is complete and before the tool runs) instead of rewriting the
 * manifest each time; finalising writes the whole manifest and drops the journal. A reader of
 * a turn that was never finalised (the process died) merges the journal in.
 */
export interface CheckpointManifest {
  version: 1;
  id: string;
  sessionId: string;
  sequence: number;
  prompt: string;
  /** The session cwd when the turn began (display paths are relative to it). */
  cwd: string;
  createdAt: string;
  finalizedAt?: string;
  files: CapturedFile[];
}

export interface CapturedFile {
  /** Absolute real path of the file the turn changed. */
  path: string;
  existed: boolean;
  /** Name of the pre-image under `files/` (only when `existed`). */
  snapshot?: string;
  bytes?: number;
  /**
   * For a file that did not exist: the outermost of its parent directories that did not exist
   * either, so restoring removes the directories the turn made (when they are empty again).
   */
  createdDirectory?: string;
}

export const MANIFEST_FILE = 'manifest.json';
export const SNAPSHOT_DIRECTORY = 'files';
export const CAPTURE_JOURNAL = 'captures.jsonl';

/** `0001-1a2b3c4d`: the sequence (at least four digits) and a short random turn id. */
const CHECKPOINT_ID_PATTERN = /^(\d{4,9})-([0-9a-f]{8})$/;
const SNAPSHOT_NAME_PATTERN = /^\d{4,9}$/;
const PROMPT_LIMIT = 200;

export function isCheckpointId(id: unknown): id is string {
  return typeof id === 'string' && CHECKPOINT_ID_PATTERN.test(id);
}

export function sequenceOf(id: string): number {
  return Number(CHECKPOINT_ID_PATTERN.exec(id)?.[1] ?? Number.NaN);
}

export function newCheckpointId(sequence: number): string {
  return `${String(sequence).padStart(4, '0')}-${randomUUID().slice(0, 8)}`;
}

export function snapshotName(index: number): string {
  return String(index).padStart(4, '0');
}

/** The prompt as a summary shows it: its first non-empty line, at most 200 characters. */
export function promptLine(prompt: string): string {
  const line = prompt.split(/\r?\n/).find((candidate) => candidate.trim() !== '') ?? '';
  const trimmed = line.trim();
  return trimmed.length > PROMPT_LIMIT ? `${trimmed.slice(0, PROMPT_LIMIT - 1)}…` : trimmed;
}

export function summaryOf(manifest: CheckpointManifest): IEditCheckpointSummary {
  return {
    id: manifest.id,
    sessionId: manifest.sessionId,
    sequence: manifest.sequence,
    prompt: manifest.prompt,
    createdAt: manifest.createdAt,
    ...(manifest.finalizedAt === undefined ? {} : { finalizedAt: manifest.finalizedAt }),
    fileCount: manifest.files.length,
  };
}

/** Writes the manifest through a temporary file and a rename, so a reader never sees half of one. */
export async function writeManifest(directory: string, manifest: CheckpointManifest): Promise<void> {
  const target = join(directory, MANIFEST_FILE);
  const temporary = `${target}.tmp`;
  await writeFile(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temporary, target);
}

/**
 * Reads and checks a manifest. The manifest lives in the project and may have been edited by
 * hand, so everything restore acts on is checked: absolute paths, generated snapshot names.
 */
export async function readManifest(directory: string, expected: { id: string; sessionId: string }): Promise<CheckpointManifest> {
  const file = join(directory, MANIFEST_FILE);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new CheckpointManifestError(file, `cannot be read (${(error as Error).message})`, error);
  }
  const problem = manifestProblem(parsed, expected);
  if (problem !== undefined) throw new CheckpointManifestError(file, problem);
  const manifest = parsed as CheckpointManifest;
  if (manifest.finalizedAt !== undefined) return manifest;
  return { ...manifest, files: mergeFiles(manifest.files, await readJournal(join(directory, CAPTURE_JOURNAL))) };
}

/**
 * The captures journalled by a turn that was not finalised. Lines that do not parse (a write
 * cut short) are skipped; a capture whose line is missing never let its tool run.
 */
async function readJournal(file: string): Promise<CapturedFile[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new CheckpointManifestError(file, `cannot be read (${(error as Error).message})`, error);
  }
  const entries: CapturedFile[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const problem = capturedFileProblem(entry, 'a journal line');
    if (problem !== undefined) throw new CheckpointManifestError(file, problem);
    entries.push(entry as CapturedFile);
  }
  return entries;
}

function mergeFiles(files: readonly CapturedFile[], journal: readonly CapturedFile[]): CapturedFile[] {
  const seen = new Set(files.map((file) => file.path));
  const merged = [...files];
  for (const entry of journal) {
    if (seen.has(entry.path)) continue;
    seen.add(entry.path);
    merged.push(entry);
  }
  return merged;
}

function manifestProblem(value: unknown, expected: { id: string; sessionId: string }): string | undefined {
  if (typeof value !== 'object' || value === null) return 'is not a JSON object';
  const manifest = value as Partial<CheckpointManifest>;
  if (manifest.version !== 1) return `has version ${JSON.stringify(manifest.version)}; this plugin reads version 1`;
  if (manifest.id !== expected.id) return `names checkpoint ${JSON.stringify(manifest.id)}, not ${expected.id}`;
  if (manifest.sessionId !== expected.sessionId) return `names session ${JSON.stringify(manifest.sessionId)}, not ${expected.sessionId}`;
  if (manifest.sequence !== sequenceOf(expected.id)) return 'has a sequence that does not match its id';
  if (typeof manifest.prompt !== 'string' || typeof manifest.cwd !== 'string' || typeof manifest.createdAt !== 'string') {
    return 'lacks prompt, cwd or createdAt';
  }
  if (manifest.finalizedAt !== undefined && typeof manifest.finalizedAt !== 'string') return 'has a finalizedAt that is not a string';
  if (!Array.isArray(manifest.files)) return 'has no files list';
  for (const [index, file] of manifest.files.entries()) {
    const problem = capturedFileProblem(file, `files[${index}]`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function capturedFileProblem(value: unknown, name: string): string | undefined {
  const entry = value as Partial<CapturedFile> | null;
  if (typeof entry !== 'object' || entry === null) return `${name} is not an object`;
  if (typeof entry.path !== 'string' || !isAbsolute(entry.path) || entry.path.includes('\0')) return `${name}.path is not an absolute path`;
  // A captured path is a real one (links resolved, no "." or ".." step): one with such a step is
  // not what a capture wrote, and would be checked lexically but written through a link.
  if (normalize(entry.path) !== entry.path) return `${name}.path is not a normalised path (it has a "." or ".." step)`;
  if (typeof entry.existed !== 'boolean') return `${name}.existed is not a boolean`;
  if (entry.existed && (typeof entry.snapshot !== 'string' || !SNAPSHOT_NAME_PATTERN.test(entry.snapshot))) {
    return `${name}.snapshot is not a generated snapshot name`;
  }
  if (entry.createdDirectory !== undefined && (typeof entry.createdDirectory !== 'string' || normalize(entry.createdDirectory) !== entry.createdDirectory || !entry.path.startsWith(`${entry.createdDirectory}${sep}`))) {
    return `${name}.createdDirectory is not a parent of its path`;
  }
  return undefined;
}

/** The session's checkpoint ids, oldest first; entries that are not checkpoint ids are ignored. */
export async function checkpointIds(directory: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries.filter(isCheckpointId).sort((left, right) => sequenceOf(left) - sequenceOf(right) || compareText(left, right));
}

/**
 * Restoring to the first manifest of `range` rolls every later one back, newest first, then
 * that one. For each path the last step wins, and that is the capture in the oldest manifest
 * of the range that holds it, so each file is written (or deleted) once, with that capture.
 */
export function restorePlan(range: readonly CheckpointManifest[]): Array<{ manifest: CheckpointManifest; file: CapturedFile }> {
  const plan = new Map<string, { manifest: CheckpointManifest; file: CapturedFile }>();
  for (const manifest of range) {
    for (const file of manifest.files) if (!plan.has(file.path)) plan.set(file.path, { manifest, file });
  }
  return [...plan.values()];
}

/** A created file needs no pre-image (restoring deletes it), so it counts as available. */
export async function snapshotAvailable(checkpointDirectory: string, file: CapturedFile): Promise<boolean> {
  if (!file.existed) return true;
  return access(join(checkpointDirectory, SNAPSHOT_DIRECTORY, file.snapshot as string), constants.R_OK).then(
    () => true,
    () => false,
  );
}
