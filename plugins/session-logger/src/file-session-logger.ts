import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describeError, TesseraError, type SessionLogData, type SessionLogger } from '@tessera/contracts';
import {
  assertValidSessionId,
  DEFAULT_EXTERNAL_PAYLOAD_THRESHOLD_BYTES,
  payloadRelativePath,
  type IExternalPayloadReference,
} from './external-payload.js';
import { LineBuffer } from './line-buffer.js';
import { appendChunks, writePayload } from './log-file-io.js';
import { isSecretKey, REDACTED, redactSecrets } from './redact-secrets.js';

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

export const DEFAULT_LOG_DIR = join(homedir(), '.tessera', 'logs');
const MAX_FLUSH_DELAY_MS = 100;
/** Buffered bytes that trigger a write without waiting for the timer. */
const EAGER_FLUSH_BYTES = 1024 * 1024;
/** Kept for retry while the file cannot be written; older lines are dropped (and reported) beyond this. */
const MAX_RETAINED_BYTES = 32 * 1024 * 1024;

export class SessionLogWriteError extends TesseraError {
  constructor(message: string, file: string, cause?: unknown) {
    super(`Session log ${file}: ${message}`, { code: 'session_log_write_failed', category: 'io', recoverable: true, details: { file }, cause });
  }
}

interface LogFile {
  readonly sessionId: string;
  /** `"sessionId":"…"`, serialised once. */
  readonly sessionJson: string;
  readonly path: string;
  readonly payloadDir: string;
  buffer: LineBuffer;
  /** Payload files waiting to be written, by hash. */
  payloads: Map<string, string>;
  /** Hashes already on disk. */
  written: Set<string>;
  writing: Promise<void>;
  dirReady: boolean;
  payloadDirReady: boolean;
  /** Set while writes fail, so a broken disk is reported once rather than every flush. */
  failing: string | undefined;
}

/**
 * JSONL session log (spec: FileSessionLogger). `log()` only redacts, serialises and buffers;
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
  private readonly onError: (error: SessionLogWriteError) => void;
  private readonly now: () => number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private eager = false;
  private lastNow = Number.NaN;
  private lastTimestamp = '';
  private readonly quotedCache = new Map<string, string>();
  private readonly prefixCache = new Map<string, string>();

  constructor(options: FileSessionLoggerOptions = {}) {
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
    this.dir = resolve(options.dir ?? DEFAULT_LOG_DIR);
    this.flushDelayMs = delay;
    this.externalPayloadThresholdBytes = threshold;
    this.onError = options.onError ?? ((error) => process.emitWarning(error.message, { code: 'TESSERA_LOGGER_ERROR' }));
    this.now = options.now ?? Date.now;
  }

  getLogPath(sessionId: string): string {
    assertValidSessionId(sessionId);
    return join(this.dir, `${sessionId}.jsonl`);
  }

  /** Buffers one event. Throws only for a session id that is not path-safe. */
  log(sessionId: string, event: string, data: SessionLogData): void {
    const file = this.file(sessionId);
    const head = `{"timestamp":"${this.timestamp()}",${file.sessionJson},"event":${this.quoted(event)}`;
    let line: string;
    if (this.isFlat(data)) {
      // Hot path (a streamed delta): nothing to redact or externalise, one native stringify.
      const json = JSON.stringify(data);
      line = json.length > 2 ? `${head},${json.slice(1)}\n` : `${head}}\n`;
    } else {
      line = head;
      for (const key in data) {
        const value = data[key];
        if (value === undefined || key === 'timestamp' || key === 'sessionId' || key === 'event') continue;
        line += this.fieldPrefix(key);
        line += isSecretKey(key) && value !== null ? `"${REDACTED}"` : this.fieldJson(file, redactSecrets(value));
      }
      line += '}\n';
    }
    file.buffer.append(line);
    this.schedule(file.buffer.bytes >= EAGER_FLUSH_BYTES);
  }

  /** Only primitives, short strings, no secret-named or reserved keys. */
  private isFlat(data: SessionLogData): boolean {
    for (const key in data) {
      const value = data[key];
      switch (typeof value) {
        case 'number':
        case 'boolean':
        case 'undefined':
          break;
        case 'string':
          // A JSON string takes at most 6 bytes per UTF-16 unit (\uXXXX) plus quotes.
          if (value.length * 6 + 2 > this.externalPayloadThresholdBytes) return false;
          break;
        default:
          if (value !== null) return false;
      }
      if (isSecretKey(key) || key === 'timestamp' || key === 'sessionId' || key === 'event') return false;
    }
    return true;
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
      json = JSON.stringify(text);
      if (this.quotedCache.size < 1_000) this.quotedCache.set(text, json);
    }
    return json;
  }

  private fieldPrefix(key: string): string {
    let prefix = this.prefixCache.get(key);
    if (prefix === undefined) {
      prefix = `,${JSON.stringify(key)}:`;
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
      file = {
        sessionId,
        sessionJson: `"sessionId":${JSON.stringify(sessionId)}`,
        path,
        payloadDir: join(this.dir, `${sessionId}.payloads`),
        buffer: new LineBuffer(),
        payloads: new Map(),
        written: new Set(),
        writing: Promise.resolve(),
        dirReady: false,
        payloadDirReady: false,
        failing: undefined,
      };
      this.files.set(sessionId, file);
    }
    return file;
  }

  /** The field's JSON, or the JSON of a reference to it when it is over the threshold. */
  private fieldJson(file: LogFile, value: unknown): string {
    const json = JSON.stringify(value) ?? 'null';
    // UTF-8 takes at most 3 bytes per UTF-16 unit: short strings skip the exact count.
    if (json.length * 3 <= this.externalPayloadThresholdBytes) return json;
    const byteLength = Buffer.byteLength(json);
    if (byteLength <= this.externalPayloadThresholdBytes) return json;
    const sha256 = createHash('sha256').update(json).digest('hex');
    if (!file.written.has(sha256)) file.payloads.set(sha256, json);
    const reference: IExternalPayloadReference = {
      kind: 'external-payload',
      encoding: 'json',
      sha256,
      byteLength,
      relativePath: payloadRelativePath(file.sessionId, sha256),
    };
    return JSON.stringify(reference);
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
    try {
      if (!file.dirReady) {
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        file.dirReady = true;
      }
      // Payloads first: a line must never reference a file that is not there.
      if (file.payloads.size > 0) {
        if (!file.payloadDirReady) {
          await mkdir(file.payloadDir, { recursive: true, mode: 0o700 });
          file.payloadDirReady = true;
        }
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

/** Discards every event (spec: SilentSessionLogger). */
export class SilentSessionLogger implements SessionLogger {
  log(): void {}
  async flush(): Promise<void> {}
}
