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

/** `key` in lower case with everything but letters and digits removed: `X-Api-Key` → `xapikey`. */
export function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * True for keys such as `apiKey`, `x-api-key`, `Authorization`, `access_token`,
 * `refreshToken`, `client_secret`, `PASSWORD` — case- and separator-insensitive. Usage
 * counters such as `inputTokens` are not secrets.
 */
export function isSecretKey(key: string): boolean {
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    const normalised = normaliseKey(key);
    verdict = SECRET_KEYS.has(normalised) || SECRET_PARTS.some((part) => normalised.includes(part));
    if (verdicts.size < 10_000) verdicts.set(key, verdict);
  }
  return verdict;
}
