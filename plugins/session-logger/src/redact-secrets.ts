import { mayContainSecret, redactSecretText } from './redact-text.js';
import { isSecretKey } from './secret-key.js';

export { isSecretKey } from './secret-key.js';

export const REDACTED = '[REDACTED]';

const keyVerdicts = new Map<string, boolean>();

/** True when a key's own text holds a credential (`{ "ghp_…": true }`); cached like `isSecretKey`. */
export function keyNeedsRedaction(key: string): boolean {
  let verdict = keyVerdicts.get(key);
  if (verdict === undefined) {
    verdict = mayContainSecret(key) && redactSecretText(key) !== key;
    if (keyVerdicts.size < 10_000) keyVerdicts.set(key, verdict);
  }
  return verdict;
}

/**
 * A JSON-safe copy of `value` with every secret-named property, at any depth, replaced by
 * `[REDACTED]`, and every credential inside a string (values, keys, error messages)
 * replaced by `[REDACTED:<kind>]` (see `redactSecretText`). Copy-on-write: objects without
 * secrets come back as they are, so the hot path (strings, numbers, small records)
 * allocates nothing. Cycles become `[Circular]`, errors `{ name, message, code? }`,
 * bigints strings.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value, new Set()) as T;
}

function redact(value: unknown, stack: Set<object>): unknown {
  if (typeof value === 'string') return redactSecretText(value);
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (stack.has(value)) return '[Circular]';
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: redactSecretText(value.name), message: redactSecretText(value.message), ...(code === undefined ? {} : { code: redact(code, stack) }) };
  }
  if (ArrayBuffer.isView(value)) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return redact(toJSON.call(value), stack);
  stack.add(value);
  try {
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let index = 0; index < value.length; index++) {
        const item = value[index];
        const next = redact(item, stack);
        if (next !== item && !copy) copy = value.slice(0, index);
        copy?.push(next);
      }
      return copy ?? value;
    }
    let copy: Record<string, unknown> | undefined;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const item = record[key];
      const next = isSecretKey(key) && item !== undefined && item !== null ? REDACTED : redact(item, stack);
      const name = keyNeedsRedaction(key) ? redactSecretText(key) : key;
      if ((next !== item || name !== key) && !copy) {
        copy = {};
        for (let before = 0; before < index; before++) copy[keys[before]!] = record[keys[before]!];
      }
      if (copy) copy[name] = next;
    }
    return copy ?? value;
  } finally {
    stack.delete(value);
  }
}
