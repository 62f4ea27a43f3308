export const REDACTED = '[REDACTED]';

/** Substrings of a normalised key (lower case, letters and digits only) that mark a secret. */
const SECRET_PARTS = [
  'apikey',
  'authorization',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'sessiontoken',
  'bearertoken',
  'secret',
  'password',
  'passwd',
  'privatekey',
];
/** Whole normalised keys that are secrets but too short to match as substrings (`token` ⊂ `inputTokens`). */
const SECRET_KEYS = new Set(['token', 'auth', 'cookie', 'setcookie', 'credentials']);

const verdicts = new Map<string, boolean>();

/**
 * True for keys such as `apiKey`, `x-api-key`, `Authorization`, `access_token`,
 * `refreshToken`, `client_secret`, `PASSWORD` — case- and separator-insensitive. Usage
 * counters such as `inputTokens` are not secrets.
 */
export function isSecretKey(key: string): boolean {
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    const normalised = key.toLowerCase().replace(/[^a-z0-9]/g, '');
    verdict = SECRET_KEYS.has(normalised) || SECRET_PARTS.some((part) => normalised.includes(part));
    if (verdicts.size < 10_000) verdicts.set(key, verdict);
  }
  return verdict;
}

/**
 * A JSON-safe copy of `value` with every secret-named property, at any depth, replaced by
 * `[REDACTED]`. Copy-on-write: objects without secrets come back as they are, so the hot
 * path (strings, numbers, small records) allocates nothing. Cycles become `[Circular]`,
 * errors `{ name, message, code? }`, bigints strings.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value, new Set()) as T;
}

function redact(value: unknown, stack: Set<object>): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (stack.has(value)) return '[Circular]';
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(code === undefined ? {} : { code: redact(code, stack) }) };
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
      if (next !== item && !copy) {
        copy = {};
        for (let before = 0; before < index; before++) copy[keys[before]!] = record[keys[before]!];
      }
      if (copy) copy[key] = next;
    }
    return copy ?? value;
  } finally {
    stack.delete(value);
  }
}
