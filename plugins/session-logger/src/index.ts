import { SessionLogger } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { FileSessionLogger, type FileSessionLoggerOptions } from './file-session-logger.js';
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
  /** Use this logger instead of a `FileSessionLogger` (the taps still write every event to it). */
  logger?: SessionLogger;
}

/**
 * Provides `SessionLogger` (a `FileSessionLogger` unless `logger` is given) and taps the
 * kernel hooks at `Stage.Observe` to log the provider, stream, tool and history events.
 * `shutdown` flushes whatever is still buffered.
 */
export function sessionLogger(options: SessionLoggerPluginOptions = {}): Plugin {
  const { logger: custom, ...fileOptions } = options;
  const logger = custom ?? new FileSessionLogger(fileOptions);
  return definePlugin({
    name: 'session-logger',
    provides: [SessionLogger],
    register({ bind, hooks }) {
      bind(SessionLogger).toConstantValue(logger);
      tapSessionLogEvents(hooks);
    },
    async shutdown() {
      await logger.flush?.();
    },
  });
}
