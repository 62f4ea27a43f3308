import { SessionConfigurationError } from './errors.js';
import type { SessionOptions } from './session-options.js';

/** Throws `SessionConfigurationError` for options a `Session` cannot start with. */
export function validateOptions(options: SessionOptions): void {
  if (typeof options?.provider?.stream !== 'function') {
    throw new SessionConfigurationError('provider', 'a Provider with a stream() method is required; add a provider plugin or pass one.');
  }
  const positive = (field: 'maxTurns' | 'providerTimeout' | 'maxStopContinuations', value: number | undefined): void => {
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
      throw new SessionConfigurationError(field, `expected a non-negative number, got ${String(value)}.`);
    }
  };
  positive('maxTurns', options.maxTurns);
  positive('providerTimeout', options.providerTimeout);
  positive('maxStopContinuations', options.maxStopContinuations);
  const threshold = options.autoCompactThreshold;
  if (threshold !== undefined && threshold !== false && !(threshold > 0 && threshold <= 1)) {
    throw new SessionConfigurationError('autoCompactThreshold', `expected a fraction in (0, 1] or false, got ${String(threshold)}.`);
  }
}
