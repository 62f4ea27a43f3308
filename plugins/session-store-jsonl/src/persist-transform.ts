import { BLOB_REF_PREFIX, isBlobRef, parseBlobRef, type BlobStore } from './blob-store.js';
import type { SessionEntry } from './entries.js';

/** Longest string written to a session line; longer ones are cut (spec: MAX_PERSIST_CHARS). */
export const MAX_PERSIST_CHARS = 500_000;
export const TRUNCATION_NOTICE = '\n\n[Session persistence truncated large content]';
/** Base64 image payloads at least this long go to the blob store. */
export const BLOB_THRESHOLD_CHARS = 1024;
const TRANSIENT_KEYS = new Set(['partialJson', 'jsonlEvents']);
// Provider-signed or encrypted blocks must round-trip byte for byte, so they are never cut.
const SIGNED_KEYS = ['signature', 'thinkingSignature', 'encrypted_content', 'encryptedContent'];
/** Entry fields that link the tree or name types: never handed to a `redact` function. */
const STRUCTURAL_KEYS = new Set(['type', 'version', 'id', 'parentId', 'timestamp', 'cwd', 'parentSession', 'customType', 'fromId', 'targetId', 'firstKeptEntryId']);

/** Replaces secrets in a text (see `SessionManagerOptions.redact`). */
export type RedactText = (text: string) => string;

/** Cuts `text` to MAX_PERSIST_CHARS including the notice, never splitting a surrogate pair. */
export function truncateForPersistence(text: string): string {
  if (text.length <= MAX_PERSIST_CHARS) return text;
  let end = MAX_PERSIST_CHARS - TRUNCATION_NOTICE.length;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end) + TRUNCATION_NOTICE;
}

function countLines(content: unknown): number | undefined {
  if (typeof content === 'string') return content.split('\n').length;
  if (!Array.isArray(content)) return undefined;
  let lines = 0;
  for (const block of content) {
    const text = (block as { text?: unknown } | null)?.text;
    if (typeof text === 'string') lines += text.split('\n').length;
  }
  return lines;
}

function tryExternalize(data: string, blobs: BlobStore): string | undefined {
  if (data.length < BLOB_THRESHOLD_CHARS || isBlobRef(data)) return undefined;
  const bytes = Buffer.from(data, 'base64');
  // Only canonical base64 round-trips exactly; anything else stays inline.
  if (bytes.toString('base64') !== data) return undefined;
  return BLOB_REF_PREFIX + blobs.put(bytes);
}

/** Returns a transformed copy; the input is never mutated. */
function transform(value: unknown, blobs: BlobStore | undefined, signed: boolean): unknown {
  if (typeof value === 'string') return signed ? value : truncateForPersistence(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => transform(item, blobs, signed));
  const source = value as Record<string, unknown>;
  const isSigned = signed || SIGNED_KEYS.some((key) => source[key] !== undefined);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (TRANSIENT_KEYS.has(key)) continue;
    copy[key] = transform(source[key], blobs, isSigned);
  }
  if (blobs && source.type === 'image' && typeof source.data === 'string') {
    const ref = tryExternalize(source.data, blobs);
    if (ref !== undefined) copy.data = ref;
  }
  if ('content' in source && typeof source.lineCount === 'number' && copy.content !== source.content) {
    copy.lineCount = countLines(copy.content) ?? source.lineCount;
  }
  return copy;
}

/**
 * A copy of `value` with `redact` applied to its strings; copy-on-write. Signed or
 * encrypted blocks, image bytes and blob refs are kept as they are.
 */
export function redactStrings(value: unknown, redact: RedactText): unknown {
  return redactValue(value, redact, 0);
}

function redactValue(value: unknown, redact: RedactText, depth: number): unknown {
  if (typeof value === 'string') return isBlobRef(value) ? value : redact(value);
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const next = redactValue(item, redact, depth + 1);
      if (next !== item && !copy) copy = value.slice(0, index);
      copy?.push(next);
    }
    return copy ?? value;
  }
  const source = value as Record<string, unknown>;
  // Providers verify signed and encrypted blocks on resume: they are written as they are.
  if (SIGNED_KEYS.some((key) => source[key] !== undefined)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(source)) {
    const item = source[key];
    // Image bytes are not text: scanning them could only corrupt them.
    const next = key === 'data' && source.type === 'image' ? item : redactValue(item, redact, depth + 1);
    if (next !== item) copy ??= { ...source };
    if (copy) copy[key] = next;
  }
  return copy ?? value;
}

/**
 * `entry` (or a header) with `redact` applied to every string of its content; the fields
 * that link the tree (`id`, `parentId`, `type`, `timestamp`, …) are left alone.
 */
export function redactEntry<T extends object>(entry: T, redact: RedactText): T {
  const source = entry as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(source)) {
    if (STRUCTURAL_KEYS.has(key)) continue;
    const item = source[key];
    const next = redactValue(item, redact, 0);
    if (next !== item) copy ??= { ...source };
    if (copy) copy[key] = next;
  }
  return (copy ?? entry) as T;
}

/**
 * The JSONL line for an entry: secrets redacted when a `redact` function is given, long
 * strings truncated, transient fields dropped, large images moved to the blob store. The
 * in-memory entry keeps its full content.
 */
export function serializeEntry(entry: object, blobs?: BlobStore, redact?: RedactText): string {
  if (redact) entry = redactEntry(entry, redact);
  const line = JSON.stringify(entry);
  // Fast path: nothing to cut, drop or externalize (the common case for text messages).
  if (
    line.length <= MAX_PERSIST_CHARS &&
    !line.includes('"partialJson"') &&
    !line.includes('"jsonlEvents"') &&
    !(blobs && line.includes('"image"'))
  ) {
    return line;
  }
  return JSON.stringify(transform(entry, blobs, false));
}

export interface BlobResolution {
  /** Refs whose blob was not found (the ref is kept). */
  missing: string[];
  /** Refs that are not `blob:sha256:<64 hex>` (never looked up). */
  invalid: string[];
}

/** Replaces blob refs in image blocks of message / custom_message entries with base64, in place. */
export function resolveBlobRefs(entry: SessionEntry, blobs: BlobStore, result: BlobResolution): void {
  if (entry.type === 'message') visit(entry.message, blobs, result);
  else if (entry.type === 'custom_message') visit(entry.content, blobs, result);
}

function visit(value: unknown, blobs: BlobStore, result: BlobResolution): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) visit(item, blobs, result);
    return;
  }
  const record = value as Record<string, unknown>;
  if (record.type === 'image' && typeof record.data === 'string' && isBlobRef(record.data)) {
    let hash: string;
    try {
      hash = parseBlobRef(record.data);
    } catch {
      result.invalid.push(record.data);
      return;
    }
    const bytes = blobs.get(hash);
    if (bytes) record.data = Buffer.from(bytes).toString('base64');
    else result.missing.push(record.data);
    return;
  }
  for (const key of Object.keys(record)) visit(record[key], blobs, result);
}
