import { MEMORY_KINDS, type MemoryEntryInput, type PendingMemoryCandidate } from '@tessera/contracts';
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readTextIfExists, writeFileAtomic } from './atomic-write.js';
import { PendingMemoryFileError } from './memory-errors.js';
import { normalizeEntry, validateEntry } from './memory-text.js';
import { MEMORY_DIRECTORY } from './project-memory-store.js';

export const PENDING_MEMORY_FILE = 'pending.jsonl';

export interface PendingMemoryStoreOptions {
  /** The project root; candidates go to `<root>/.tessera/memory/pending.jsonl`. */
  readonly root: string;
  /** ISO time for `createdAt`. */
  readonly now: () => string;
}

/**
 * Candidates waiting for review, one JSON object per line in `pending.jsonl`. Adding appends a
 * line; taking one out (approve, reject) rewrites the file through a rename. The policy is the
 * caller's job: this store keeps whatever it is given.
 */
export class PendingMemoryStore {
  readonly path: string;

  constructor(private readonly options: PendingMemoryStoreOptions) {
    this.path = join(options.root, MEMORY_DIRECTORY, PENDING_MEMORY_FILE);
  }

  async list(): Promise<PendingMemoryCandidate[]> {
    const text = await readTextIfExists(() => readFile(this.path, 'utf8'));
    if (text === undefined) return [];
    const candidates: PendingMemoryCandidate[] = [];
    text.split(/\r?\n/).forEach((line, index) => {
      if (line.trim() === '') return;
      candidates.push(parseCandidate(line, this.path, index + 1));
    });
    return candidates;
  }

  /** The pending candidate with the same topic and normalised text, if any. */
  async find(entry: MemoryEntryInput): Promise<PendingMemoryCandidate | undefined> {
    const wanted = normalizeEntry(entry.text);
    return (await this.list()).find((candidate) => candidate.topic === entry.topic && normalizeEntry(candidate.text) === wanted);
  }

  async add(input: MemoryEntryInput, source: string): Promise<PendingMemoryCandidate> {
    const { kind, topic, text } = validateEntry(input);
    const candidate: PendingMemoryCandidate = { id: `m-${randomBytes(4).toString('hex')}`, kind, topic, text, createdAt: this.options.now(), source };
    await mkdir(dirname(this.path), { recursive: true });
    await appendFile(this.path, `${JSON.stringify(candidate)}\n`, 'utf8');
    return candidate;
  }

  /** Takes the candidate out of the file; undefined when it is not pending. */
  async remove(id: string): Promise<PendingMemoryCandidate | undefined> {
    const candidates = await this.list();
    const found = candidates.find((candidate) => candidate.id === id);
    if (found === undefined) return undefined;
    const rest = candidates.filter((candidate) => candidate.id !== id);
    await writeFileAtomic(this.path, rest.map((candidate) => `${JSON.stringify(candidate)}\n`).join(''));
    return found;
  }
}

function parseCandidate(line: string, file: string, lineNumber: number): PendingMemoryCandidate {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new PendingMemoryFileError(file, lineNumber, 'not JSON');
  }
  const record = value as Record<string, unknown>;
  const strings = ['id', 'topic', 'text', 'createdAt', 'source'] as const;
  if (typeof value !== 'object' || value === null || strings.some((key) => typeof record[key] !== 'string')) {
    throw new PendingMemoryFileError(file, lineNumber, `a candidate needs string fields ${strings.join(', ')}`);
  }
  if (!MEMORY_KINDS.includes(record.kind as never)) throw new PendingMemoryFileError(file, lineNumber, `unknown kind ${JSON.stringify(record.kind)}`);
  return value as PendingMemoryCandidate;
}
