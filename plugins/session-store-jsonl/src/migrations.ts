import { randomFillSync, randomUUID } from 'node:crypto';

// Ids come from a pooled random buffer: one syscall per 2,048 ids instead of one UUID each.
const pool = Buffer.alloc(8192);
let poolOffset = pool.length;
function randomHex8(): string {
  if (poolOffset + 4 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const id = pool.toString('hex', poolOffset, poolOffset + 4);
  poolOffset += 4;
  return id;
}
import { CURRENT_SESSION_VERSION, isSessionHeader, type FileEntry } from './entries.js';
import { SessionVersionTooNewError } from './errors.js';

/** An 8-character entry id not in `taken` (a full UUID after 100 collisions). */
export function generateEntryId(taken: { has(id: string): boolean }): string {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const id = randomHex8();
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/**
 * Brings header + entries (in file order) to the current version, in place. Returns true
 * when anything changed, so the caller rewrites the file. A version newer than supported
 * throws before anything is touched.
 */
export function migrateToCurrentVersion(fileEntries: FileEntry[], file?: string): boolean {
  const header = fileEntries[0];
  if (!header || !isSessionHeader(header)) return false;
  const version = typeof header.version === 'number' ? header.version : 1;
  if (version > CURRENT_SESSION_VERSION) throw new SessionVersionTooNewError(file, version);
  if (version >= CURRENT_SESSION_VERSION) return false;
  if (version < 2) migrateV1ToV2(fileEntries);
  migrateV2ToV3(fileEntries);
  return true;
}

type Mutable = Record<string, unknown>;

/** Linear parent chain in file order; `firstKeptEntryIndex` (header = line 0) → `firstKeptEntryId`. */
function migrateV1ToV2(fileEntries: FileEntry[]): void {
  const taken = new Set<string>();
  let previous: string | null = null;
  for (let index = 1; index < fileEntries.length; index += 1) {
    const entry = fileEntries[index] as unknown as Mutable;
    const id = generateEntryId(taken);
    taken.add(id);
    entry.id = id;
    entry.parentId = previous;
    previous = id;
  }
  for (let index = 1; index < fileEntries.length; index += 1) {
    const entry = fileEntries[index] as unknown as Mutable;
    if (entry.type !== 'compaction' || typeof entry.firstKeptEntryIndex !== 'number') continue;
    const target = fileEntries[entry.firstKeptEntryIndex] as unknown as Mutable | undefined;
    if (entry.firstKeptEntryIndex > 0 && target && typeof target.id === 'string') entry.firstKeptEntryId = target.id;
    delete entry.firstKeptEntryIndex;
  }
  (fileEntries[0] as Mutable).version = 2;
}

/** Legacy `hookMessage` role → `custom`. */
function migrateV2ToV3(fileEntries: FileEntry[]): void {
  for (let index = 1; index < fileEntries.length; index += 1) {
    const entry = fileEntries[index] as unknown as Mutable;
    const message = entry.message as Mutable | undefined;
    if (entry.type === 'message' && message && message.role === 'hookMessage') message.role = 'custom';
  }
  (fileEntries[0] as Mutable).version = CURRENT_SESSION_VERSION;
}
