import type { SessionLogData } from '@tessera/contracts';
import { keyNeedsRedaction } from './redact-secrets.js';
import { mayContainSecret } from './redact-text.js';
import { isSecretKey } from './secret-key.js';

/**
 * True when `data` can be written with one native `JSON.stringify`: only primitives,
 * strings too short to ever need an external payload and without a credential hint
 * (`mayContainSecret`), no secret-named, credential-holding or reserved keys.
 */
export function isFlatRecord(data: SessionLogData, thresholdBytes: number): boolean {
  for (const key in data) {
    const value = data[key];
    switch (typeof value) {
      case 'number':
      case 'boolean':
      case 'undefined':
        break;
      case 'string':
        // A JSON string takes at most 6 bytes per UTF-16 unit (\uXXXX) plus quotes.
        if (value.length * 6 + 2 > thresholdBytes || mayContainSecret(value)) return false;
        break;
      default:
        if (value !== null) return false;
    }
    if (isSecretKey(key) || key === 'timestamp' || key === 'sessionId' || key === 'event' || keyNeedsRedaction(key)) return false;
  }
  return true;
}
