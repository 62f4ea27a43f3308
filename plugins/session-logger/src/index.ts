import { Diagnostics, processWarningDiagnostics, SessionLogger, TesseraError, type DiagnosticReport, type DiagnosticsReporter } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { checkFileSessionLoggerOptions, FileSessionLogger, type FileSessionLoggerOptions, type SessionLogWriteError } from './file-session-logger.js';
import { tapSessionLogEvents } from './session-log-taps.js';

export { DEFAULT_LOG_DIR, FileSessionLogger, SessionLogWriteError } from './file-session-logger.js';
export { SilentSessionLogger } from './silent-session-logger.js';
export type { FileSessionLoggerOptions } from './file-session-logger.js';
export {
  assertValidSessionId,
  DEFAULT_EXTERNAL_PAYLOAD_THRESHOLD_BYTES,
  externalPayloadReferenceProblem,
  InvalidSessionIdError,
  looksLikeExternalPayloadReference,
  payloadRelativePath,
} from './external-payload.js';
export type { IExternalPayloadReference } from './external-payload.js';
export { isSecretKey, REDACTED, redactSecrets } from './redact-secrets.js';
export { redactSecretText, SecretTextStream } from './redact-text.js';
export { tapSessionLogEvents } from './session-log-taps.js';
export {
  parseSessionLog,
  readSessionLog,
  replaySessionLogEntries,
  resolveExternalPayload,
  SessionReplayError,
} from './session-log-replay.js';
export type { ISessionReplayRecord, ReplayOptions, SessionLogEntry } from './session-log-replay.js';
export { validateSessionReplayLogEntries } from './session-log-validation.js';
export type { SessionReplayIssue, SessionReplayIssueCode, SessionReplayValidation, ValidateOptions } from './session-log-validation.js';

export interface SessionLoggerPluginOptions extends FileSessionLoggerOptions {
  /**
   * Use this logger instead of a `FileSessionLogger` (the taps still write every event to it).
   * It is yours: bound as it is, shared by every kernel the plugin value is composed into,
   * flushed (never closed) at kernel shutdown.
   */
  logger?: SessionLogger;
}

/**
 * Provides `SessionLogger` (a `FileSessionLogger` unless `logger` is given) and taps the
 * kernel hooks at `Stage.Observe` to log the provider, stream, tool and history events.
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own
 * `FileSessionLogger` when `SessionLogger` is first resolved (no directory is made before the
 * first line is written) and flushes it when the kernel shuts down. Failed writes go to the
 * kernel's `Diagnostics` reporter (`TESSERA_LOGGER_ERROR`) unless `onError` is given.
 */
export function sessionLogger(options: SessionLoggerPluginOptions = {}): Plugin {
  if (typeof options !== 'object' || options === null) {
    throw new TesseraError('sessionLogger: options must be an object.', {
      code: 'invalid_session_logger_option', category: 'configuration', recoverable: false, details: { field: 'options' },
    });
  }
  const { logger: given, ...rest } = options;
  const fileOptions: FileSessionLoggerOptions = { ...rest };
  if (given !== undefined && typeof given?.log !== 'function') {
    throw new TesseraError('sessionLogger: logger must be a SessionLogger (an object with log()).', {
      code: 'invalid_session_logger_option', category: 'configuration', recoverable: false, details: { field: 'logger' },
    });
  }
  if (!given) checkFileSessionLoggerOptions(fileOptions);
  return definePlugin({
    name: 'session-logger',
    provides: [SessionLogger],
    optional: [Diagnostics],
    register({ bind, hooks }) {
      if (given) bind(SessionLogger).toConstantValue(given);
      else {
        bind(SessionLogger)
          .toResolvedValue(
            (diagnostics: DiagnosticsReporter | undefined) =>
              new FileSessionLogger({
                ...fileOptions,
                onError: fileOptions.onError ?? ((error) => (diagnostics ?? processWarningDiagnostics).report(writeErrorReport(error))),
              }),
            [{ serviceIdentifier: Diagnostics, optional: true }],
          )
          .inSingletonScope()
          .onDeactivation((logger) => logger.flush?.());
      }
      tapSessionLogEvents(hooks);
    },
    async shutdown() {
      await given?.flush?.();
    },
  });
}

/** A failed write as a `Diagnostics` report; the file travels in its own field. */
function writeErrorReport(error: SessionLogWriteError): DiagnosticReport {
  const file = (error.details as { file?: unknown } | undefined)?.file;
  if (typeof file !== 'string') return { severity: 'warning', code: 'TESSERA_LOGGER_ERROR', source: 'session-logger', message: error.message };
  const prefix = `Session log ${file}: `;
  const message = error.message.startsWith(prefix) ? `Session log: ${error.message.slice(prefix.length)}` : error.message;
  return { severity: 'warning', code: 'TESSERA_LOGGER_ERROR', source: 'session-logger', message, file };
}
