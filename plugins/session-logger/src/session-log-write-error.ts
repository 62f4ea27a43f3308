import { TesseraError } from '@tessera/contracts';

/** A session log (or payload) file could not be written; the lines are kept for the next attempt. */
export class SessionLogWriteError extends TesseraError {
  constructor(message: string, file: string, cause?: unknown) {
    super(`Session log ${file}: ${message}`, { code: 'session_log_write_failed', category: 'io', recoverable: true, details: { file }, cause });
  }
}
