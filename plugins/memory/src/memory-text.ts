import { MEMORY_KINDS, type MemoryEntryInput, type MemoryKind } from '@tessera/contracts';
import { InvalidMemoryEntryError, InvalidMemoryTopicError } from './memory-errors.js';

/** Longest entry text kept, in characters: memory holds facts, not documents. */
export const MAX_ENTRY_CHARS = 2000;

const TOPIC = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** Names Windows will not create as files, whatever the extension. */
const RESERVED = /^(?:con|prn|aux|nul|com\d|lpt\d)(?:\.|$)/;

/**
 * Checks a topic before it becomes part of a path and returns it lower-cased. Refuses path
 * separators, `..`, a leading dot, and anything but letters, digits, `.`, `_`, `-`.
 */
export function validateTopic(topic: unknown): string {
  if (typeof topic !== 'string' || topic.trim() === '') throw new InvalidMemoryTopicError(topic, 'it is empty');
  if (/[/\\]/.test(topic)) throw new InvalidMemoryTopicError(topic, 'it contains a path separator');
  if (topic.includes('..')) throw new InvalidMemoryTopicError(topic, 'it contains ".."');
  const lower = topic.toLowerCase();
  if (!TOPIC.test(lower)) throw new InvalidMemoryTopicError(topic, 'it has characters other than letters, digits, ".", "_" and "-", or is longer than 64');
  if (RESERVED.test(lower)) throw new InvalidMemoryTopicError(topic, 'it is a reserved device name');
  return lower;
}

/** Checks kind, topic and text, and folds the text onto one line. */
export function validateEntry(entry: MemoryEntryInput): { kind: MemoryKind; topic: string; text: string } {
  if (typeof entry !== 'object' || entry === null) throw new InvalidMemoryEntryError('entry', 'must be an object with kind, topic and text');
  if (!MEMORY_KINDS.includes(entry.kind)) throw new InvalidMemoryEntryError('kind', `must be one of ${MEMORY_KINDS.join(', ')}, got ${JSON.stringify(entry.kind)}`);
  const topic = validateTopic(entry.topic);
  if (typeof entry.text !== 'string') throw new InvalidMemoryEntryError('text', 'must be a string');
  const text = foldText(entry.text);
  if (text === '') throw new InvalidMemoryEntryError('text', 'is empty');
  if (text.length > MAX_ENTRY_CHARS) throw new InvalidMemoryEntryError('text', `is ${text.length} characters; keep one fact under ${MAX_ENTRY_CHARS}`);
  return { kind: entry.kind, topic, text };
}

/** One line: line breaks and runs of white space become one space. */
export function foldText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The form two entries are compared in: Unicode-normalised, lower case, punctuation and
 * symbols removed, white space collapsed. "Use pnpm!" and "use  PNPM" are the same entry.
 */
export function normalizeEntry(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** An entry line as written in topic files: `- [kind] text`. */
export function formatEntryLine(kind: MemoryKind, text: string): string {
  return `- [${kind}] ${text}`;
}

const ENTRY_LINE = /^\s*[-*]\s+(?:\[(user|feedback|project|reference)\]\s+)?(.*\S)\s*$/;

/** Entry lines of a topic file (other lines — headings, notes a person wrote — are skipped). */
export function parseEntryLines(text: string): Array<{ kind?: MemoryKind; text: string }> {
  const entries: Array<{ kind?: MemoryKind; text: string }> = [];
  for (const line of text.split(/\r?\n/)) {
    const match = ENTRY_LINE.exec(line);
    if (match === null) continue;
    entries.push({ ...(match[1] === undefined ? {} : { kind: match[1] as MemoryKind }), text: match[2]! });
  }
  return entries;
}
