import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { TesseraError, type Diagnostic, type IHistoryEntry, type Message, type ParseResult } from '@tessera/contracts';
import { assertValidSessionId, externalPayloadReferenceProblem, looksLikeExternalPayloadReference } from './external-payload.js';

/** One parsed JSONL line: `{ timestamp, sessionId, event, ...data }`. */
export interface SessionLogEntry {
  timestamp?: string;
  sessionId?: string;
  event: string;
  [field: string]: unknown;
}

/** What a log replays to (spec: ISessionReplayRecord). */
export interface ISessionReplayRecord {
  sessionId: string | undefined;
  messages: Message[];
  history: IHistoryEntry[];
  /** `history_mutation` events applied. */
  mutationCount: number;
}

export interface ReplayOptions {
  /** The log directory, where `{sessionId}.payloads/` lives. Needed when a replayed field was stored externally. */
  dir?: string;
}

export class SessionReplayError extends TesseraError {
  constructor(message: string, eventIndex: number, cause?: unknown) {
    super(`Session log event #${eventIndex}: ${message}`, { code: 'session_replay_failed', category: 'validation', recoverable: false, details: { eventIndex }, cause });
  }
}

/** Reads `{dir}/{sessionId}.jsonl`. Lines that are not JSON objects (e.g. a torn last line) are reported, not fatal. */
export async function readSessionLog(dir: string, sessionId: string): Promise<ParseResult<SessionLogEntry[]>> {
  assertValidSessionId(sessionId);
  const file = join(resolve(dir), `${sessionId}.jsonl`);
  const text = await readFile(file, 'utf8');
  return parseSessionLog(text, file);
}

export function parseSessionLog(text: string, file = '<session log>'): ParseResult<SessionLogEntry[]> {
  const entries: SessionLogEntry[] = [];
  const diagnostics: Diagnostic[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      const value: unknown = JSON.parse(line);
      if (!value || typeof value !== 'object' || Array.isArray(value) || typeof (value as SessionLogEntry).event !== 'string') {
        throw new Error('not an event object with an "event" name');
      }
      entries.push(value as SessionLogEntry);
    } catch (error) {
      diagnostics.push({ severity: 'error', file, line: index + 1, message: `skipped line: ${(error as Error).message}` });
    }
  });
  return { value: entries, diagnostics };
}

/**
 * Loads the value behind an external payload reference, checking its hash and size.
 * Throws a located error when the file is missing or does not match.
 */
export function resolveExternalPayload(reference: Record<string, unknown>, sessionId: string | undefined, dir: string, eventIndex: number): unknown {
  const problem = externalPayloadReferenceProblem(reference, sessionId);
  if (problem) throw new SessionReplayError(`invalid external payload reference: ${problem}.`, eventIndex);
  const file = join(resolve(dir), reference.relativePath as string);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new SessionReplayError(`external payload ${file} cannot be read: ${(error as Error).message}.`, eventIndex, error);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== reference.sha256 || bytes.length !== reference.byteLength) {
    throw new SessionReplayError(`external payload ${file} does not match its reference (sha256 or byteLength differ); the log or payload was altered.`, eventIndex);
  }
  return JSON.parse(bytes.toString('utf8'));
}

/**
 * Rebuilds messages and the history timeline from `history_mutation` events (spec:
 * replaySessionLogEntries). Fields stored externally are loaded from `options.dir`, so
 * values over the inline threshold come back exactly as they were logged.
 */
export function replaySessionLogEntries(entries: readonly SessionLogEntry[], options: ReplayOptions = {}): ISessionReplayRecord {
  let history: IHistoryEntry[] = [];
  let mutationCount = 0;
  let sessionId: string | undefined;
  entries.forEach((entry, eventIndex) => {
    sessionId ??= typeof entry.sessionId === 'string' ? entry.sessionId : undefined;
    if (entry.event !== 'history_mutation') return;
    const field = (name: string): unknown => {
      const value = entry[name];
      if (!looksLikeExternalPayloadReference(value)) return value;
      if (options.dir === undefined) {
        throw new SessionReplayError(`field "${name}" is stored as an external payload; pass { dir } (the log directory) to replay it.`, eventIndex);
      }
      return resolveExternalPayload(value, entry.sessionId, options.dir, eventIndex);
    };
    switch (entry.mutation) {
      case 'append_message':
      case 'append_event': {
        const item = field('entry') as IHistoryEntry | undefined;
        if (!item || typeof item !== 'object' || (item.category !== 'chat' && item.category !== 'event')) {
          throw new SessionReplayError(`history_mutation "${entry.mutation}" has no valid "entry".`, eventIndex);
        }
        history.push(item);
        break;
      }
      case 'reset': {
        const items = field('entries');
        if (!Array.isArray(items)) throw new SessionReplayError('history_mutation "reset" has no "entries" array.', eventIndex);
        history = [...(items as IHistoryEntry[])];
        break;
      }
      default:
        throw new SessionReplayError(`unknown history mutation ${JSON.stringify(entry.mutation)}.`, eventIndex);
    }
    mutationCount += 1;
  });
  const messages = history.filter((item) => item.category === 'chat').map((item) => item.data as Message);
  return { sessionId, messages, history, mutationCount };
}
