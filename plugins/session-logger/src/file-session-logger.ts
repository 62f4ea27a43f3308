import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describeError, TesseraError, type SessionLogData, type SessionLogger, copyWith } from '@tessera/contracts';
import { assertValidSessionId, DEFAULT_EXTERNAL_PAYLOAD_THRESHOLD_BYTES, payloadRelativePath, type IExternalPayloadReference } from './external-payload.js';
import { DeltaLines } from './delta-lines.js';
import { isFlatRecord } from './flat-record.js';
import { LineBuffer } from './line-buffer.js';
import { appendChunks, started, writePayload } from './log-file-io.js';
import { SessionLogWriteError } from './session-log-write-error.js';
import { isSecretKey, keyNeedsRedaction, REDACTED, redactSecrets } from './redact-secrets.js';
import { redactSecretText } from './redact-text.js';
import { StreamEventRedactor } from './stream-event-redactor.js';

export interface FileSessionLoggerOptions {
  /** Directory of `{sessionId}.jsonl` files (default `~/.tessera/logs`). */
  dir?: string;
  /** Fields whose JSON is larger go to `{sessionId}.payloads/{sha256}.json` (default 32 KiB). */
  externalPayloadThresholdBytes?: number;
  /** How long a logged line may wait in memory before it is written (default 20 ms, at most 100). */
  flushDelayMs?: number;
  /** Told about every failed write. Default: a `TESSERA_LOGGER_ERROR` process warning. */
  onError?: (error: SessionLogWriteError) => void;
  /** Source of line timestamps (default `Date.now`). */
  now?: () => number;
}

export { SessionLogWriteError };

export const DEFAULT_LOG_DIR = join(homedir(), '.tessera', 'logs');
const MAX_FLUSH_DELAY_MS = 100;
/** Buffered bytes that trigger a write without waiting for the timer. */
const EAGER_FLUSH_BYTES = 1024 * 1024;
/** Kept for retry while the file cannot be written; older lines are dropped (and reported) beyond this. */
const MAX_RETAINED_BYTES = 32 * 1024 * 1024;

/**
 * Checks logger options without building a logger (no directory, no environment): what the
 * `sessionLogger()` plugin runs so a bad option fails when the plugin is made. Returns the
 * effective flush delay and payload threshold.
 */
export function checkFileSessionLoggerOptions(options: FileSessionLoggerOptions): { flushDelayMs: number; externalPayloadThresholdBytes: number } {
  const delay = options.flushDelayMs ?? 20;
  if (!(delay >= 0 && delay <= MAX_FLUSH_DELAY_MS)) {
    throw new TesseraError(`FileSessionLogger option "flushDelayMs" must be between 0 and ${MAX_FLUSH_DELAY_MS}, got ${String(delay)}: running turns must reach the log within 100 ms.`, {
      code: 'invalid_session_logger_option', category: 'configuration', recoverable: false, details: { field: 'flushDelayMs' },
    });
  }
  const threshold = options.externalPayloadThresholdBytes ?? DEFAULT_EXTERNAL_PAYLOAD_THRESHOLD_BYTES;
  if (!(Number.isInteger(threshold) && threshold > 0)) {
    throw new TesseraError(`FileSessionLogger option "externalPayloadThresholdBytes" must be a positive integer, got ${String(threshold)}.`, {
      code: 'invalid_session_logger_option', category: 'configuration', recoverable: false, details: { field: 'externalPayloadThresholdBytes' },
    });
  }
  for (const field of ['onError', 'now'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'function') {
      throw new TesseraError(`FileSessionLogger option "${field}" must be a function.`, {
        code: 'invalid_session_logger_option', category: 'configuration', recoverable: false, details: { field },
      });
    }
  }
  if (options.dir !== undefined && (typeof options.dir !== 'string' || options.dir === '')) {
    throw new TesseraError('FileSessionLogger option "dir" must be a non-empty path.', {
      code: 'invalid_session_logger_option', category: 'configuration', recoverable: false, details: { field: 'dir' },
    });
  }
  return { flushDelayMs: delay, externalPayloadThresholdBytes: threshold };
}

interface LogFile {
  readonly sessionId: string;
  /** `"sessionId":"…"`, serialised once. */
  readonly sessionJson: string;
  readonly path: string;
  readonly payloadDir: string;
  buffer: LineBuffer;
  /** Fast path for the two per-chunk stream events. */
  deltas: DeltaLines;
  /** Redacts the provider's native stream events as fragments of one text. */
  streamEvents: StreamEventRedactor;
  /** Payload files waiting to be written, by hash. */
  payloads: Map<string, string>;
  /** The last field externalised and the reference JSON written for it. */
  lastPayload: { json: string; reference: string } | undefined;
  /** Hashes already on disk. */
  written: Set<string>;
  writing: Promise<void>;
  /**
   * The directories' `mkdir`, started as soon as they are known to be needed (first line,
   * first payload) so the file system works while the turn runs; reset after a failure.
   */
  dirMade: Promise<void> | undefined;
  payloadDirMade: Promise<void> | undefined;
  /** Set while writes fail, so a broken disk is reported once rather than every flush. */
  failing: string | undefined;
}

/**
 * JSONL session log (spec: FileSessionLogger). `log()` only redacts (secret-named keys,
 * and credentials inside any string: see `redactSecretText`), serialises and buffers;
 * lines reach the file in batches, asynchronously, at most `flushDelayMs` after they were
 * logged — never a synchronous append per event. Fields over the inline threshold are
 * written once, content-addressed, and referenced from the line. Write failures are
 * reported through `onError` and the lines are kept for the next attempt.
 */
export class FileSessionLogger implements SessionLogger {
  readonly dir: string;
  readonly flushDelayMs: number;
  readonly externalPayloadThresholdBytes: number;
  private readonly files = new Map<string, LogFile>();
  private lastFile: LogFile | undefined;
  private readonly onError: (error: SessionLogWriteError) => void;
  private readonly now: () => number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private eager = false;
  private lastNow = Number.NaN;
  private lastTimestamp = '';
  private readonly quotedCache = new Map<string, string>();
  private readonly prefixCache = new Map<string, string>();

  constructor(options: FileSessionLoggerOptions = {}) {
    const { flushDelayMs, externalPayloadThresholdBytes } = checkFileSessionLoggerOptions(options);
    this.dir = resolve(options.dir ?? DEFAULT_LOG_DIR);
    this.flushDelayMs = flushDelayMs;
    this.externalPayloadThresholdBytes = externalPayloadThresholdBytes;
    // Used without a kernel (no Diagnostics reporter): a process warning. The sessionLogger()
    // plugin passes one that reports through the kernel's Diagnostics.
    this.onError = options.onError ?? ((error) => process.emitWarning(error.message, { code: 'TESSERA_LOGGER_ERROR' }));
    this.now = options.now ?? Date.now;
  }

  getLogPath(sessionId: string): string {
    assertValidSessionId(sessionId);
    return join(this.dir, `${sessionId}.jsonl`);
  }

  /** Buffers one event. Throws only for a session id that is not path-safe. */
  log(sessionId: string, event: string, data: SessionLogData): void {
    const file = this.lastFile?.sessionId === sessionId ? this.lastFile : this.file(sessionId);
    // A streamed chunk (two events each) is almost every line of a turn: see DeltaLines.
    const delta = event === 'text_delta' || event === 'provider_stream_raw_delta';
    if (!(delta && file.deltas.repeat(file.buffer, event, data))) {
      const timestamp = this.timestamp();
      if (!(delta && file.deltas.write(file.buffer, event, timestamp, data))) {
        file.deltas.interrupt();
        file.buffer.append(this.line(file, timestamp, event, data));
      }
    }
    this.schedule(file.buffer.bytes >= EAGER_FLUSH_BYTES);
  }

  private line(file: LogFile, timestamp: string, event: string, data: SessionLogData): string {
    if (event === 'provider_native_raw_payload' && data.payloadKind === 'stream_event' && data.payload !== undefined) {
      data = copyWith(data, { payload: file.streamEvents.redact(data.payload, data.round, data.executionId) as SessionLogData[string] });
    }
    const head = `{"timestamp":"${timestamp}",${file.sessionJson},"event":${this.quoted(event)}`;
    if (isFlatRecord(data, this.externalPayloadThresholdBytes)) {
      // Nothing to redact (no secret-named key, no credential hint) or externalise: one native stringify.
      const json = JSON.stringify(data);
      return json.length > 2 ? `${head},${json.slice(1)}\n` : `${head}}\n`;
    }
    let line = head;
    for (const key in data) {
      const value = data[key];
      if (value === undefined || key === 'timestamp' || key === 'sessionId' || key === 'event') continue;
      line += this.fieldPrefix(key);
      line += isSecretKey(key) && value !== null ? `"${REDACTED}"` : this.fieldJson(file, redactSecrets(value));
    }
    return `${line}}\n`;
  }

  private timestamp(): string {
    const now = this.now();
    if (now !== this.lastNow) {
      this.lastNow = now;
      this.lastTimestamp = new Date(now).toISOString();
    }
    return this.lastTimestamp;
  }

  private quoted(text: string): string {
    let json = this.quotedCache.get(text);
    if (json === undefined) {
      json = JSON.stringify(redactSecretText(text));
      if (this.quotedCache.size < 1_000) this.quotedCache.set(text, json);
    }
    return json;
  }

  private fieldPrefix(key: string): string {
    let prefix = this.prefixCache.get(key);
    if (prefix === undefined) {
      prefix = `,${JSON.stringify(keyNeedsRedaction(key) ? redactSecretText(key) : key)}:`;
      if (this.prefixCache.size < 1_000) this.prefixCache.set(key, prefix);
    }
    return prefix;
  }

  /** Resolves once every event logged before the call is written (or its failure reported). */
  async flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([...this.files.values()].map((file) => this.write(file)));
  }

  private file(sessionId: string): LogFile {
    let file = this.files.get(sessionId);
    if (!file) {
      const path = this.getLogPath(sessionId);
      const sessionJson = `"sessionId":${JSON.stringify(sessionId)}`;
      file = {
        sessionId,
        sessionJson,
        path,
        payloadDir: join(this.dir, `${sessionId}.payloads`),
        buffer: new LineBuffer(),
        deltas: new DeltaLines(sessionJson, Math.floor((this.externalPayloadThresholdBytes - 2) / 6)),
        streamEvents: new StreamEventRedactor(),
        payloads: new Map(),
        lastPayload: undefined,
        written: new Set(),
        writing: Promise.resolve(),
        dirMade: started(mkdir(this.dir, { recursive: true, mode: 0o700 })),
        payloadDirMade: undefined,
        failing: undefined,
      };
      this.files.set(sessionId, file);
    }
    this.lastFile = file;
    return file;
  }

  /** The field's JSON, or the JSON of a reference to it when it is over the threshold. */
  private fieldJson(file: LogFile, value: unknown): string {
    const json = JSON.stringify(value) ?? 'null';
    // UTF-8 takes at most 3 bytes per UTF-16 unit: short strings skip the exact count.
    if (json.length * 3 <= this.externalPayloadThresholdBytes) return json;
    // A response is logged whole twice in a row (raw, then normalised): comparing equal
    // strings is a memcmp, far cheaper than counting and hashing them again.
    if (json === file.lastPayload?.json) return file.lastPayload.reference;
    const byteLength = Buffer.byteLength(json);
    if (byteLength <= this.externalPayloadThresholdBytes) return json;
    const sha256 = createHash('sha256').update(json).digest('hex');
    if (!file.written.has(sha256)) {
      file.payloads.set(sha256, json);
      file.payloadDirMade ??= started(mkdir(file.payloadDir, { recursive: true, mode: 0o700 }));
    }
    const reference: IExternalPayloadReference = {
      kind: 'external-payload',
      encoding: 'json',
      sha256,
      byteLength,
      relativePath: payloadRelativePath(file.sessionId, sha256),
    };
    file.lastPayload = { json, reference: JSON.stringify(reference) };
    return file.lastPayload.reference;
  }

  private schedule(eager: boolean): void {
    if (eager && !this.eager) {
      this.eager = true;
      setImmediate(() => {
        this.eager = false;
        void this.flush();
      });
    }
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, this.flushDelayMs);
    }
  }

  /** Queues a drain behind the file's previous one, so batches land in order. */
  private write(file: LogFile): Promise<void> {
    file.writing = file.writing.then(() => this.drain(file));
    return file.writing;
  }

  private async drain(file: LogFile): Promise<void> {
    if (file.buffer.lines === 0 && file.payloads.size === 0) return;
    const taken = file.buffer.take();
    // Only consecutive lines share it; do not keep a large string alive between batches.
    file.lastPayload = undefined;
    try {
      file.dirMade ??= started(mkdir(this.dir, { recursive: true, mode: 0o700 }));
      await file.dirMade.catch((error: unknown) => {
        file.dirMade = undefined;
        throw error;
      });
      // Payloads first: a line must never reference a file that is not there.
      if (file.payloads.size > 0) {
        file.payloadDirMade ??= started(mkdir(file.payloadDir, { recursive: true, mode: 0o700 }));
        await file.payloadDirMade.catch((error: unknown) => {
          file.payloadDirMade = undefined;
          throw error;
        });
        await Promise.all(
          [...file.payloads].map(async ([sha256, json]) => {
            await writePayload(file.payloadDir, sha256, json);
            file.payloads.delete(sha256);
            file.written.add(sha256);
          }),
        );
      }
      if (taken.lines > 0) await appendChunks(file.path, taken.chunks);
      file.failing = undefined;
    } catch (error) {
      file.buffer.restore(taken);
      const dropped = file.buffer.dropOldest(MAX_RETAINED_BYTES);
      if (dropped > 0) {
        this.report(new SessionLogWriteError(`dropped the oldest ${dropped} bytes of events: the file has been unwritable for more than ${MAX_RETAINED_BYTES} bytes.`, file.path));
      }
      const message = describeError(error);
      if (file.failing !== message) {
        file.failing = message;
        this.report(new SessionLogWriteError(`write failed (${message}); ${file.buffer.lines} line(s) kept in memory for the next attempt.`, file.path, error));
      }
    }
  }

  private report(error: SessionLogWriteError): void {
    try {
      this.onError(error);
    } catch {
      process.emitWarning(error.message, { code: 'TESSERA_LOGGER_ERROR' });
    }
  }
}
