import { describe, expect, it } from 'vitest';
import { fake } from './fake-credentials.test-helper.js';
import { isSecretKey, REDACTED, redactSecrets } from './redact-secrets.js';

describe('redactSecrets', () => {
  it('redacts the spec keys at any depth, case- and separator-insensitively', () => {
    const input = {
      apiKey: 'sk-1',
      APIKEY: 'sk-2',
      headers: { Authorization: 'Bearer x', 'x-api-key': 'k', 'X-Api-Key': 'k2', xApiKey: 'k3', Cookie: 'c' },
      auth: { accessToken: 'a', refresh_token: 'r', client_secret: 's', Password: 'p', nested: [{ secret: { deep: 1 } }] },
      profile: { api_key: 'snake' },
    };
    expect(redactSecrets(input)).toEqual({
      apiKey: REDACTED,
      APIKEY: REDACTED,
      headers: { Authorization: REDACTED, 'x-api-key': REDACTED, 'X-Api-Key': REDACTED, xApiKey: REDACTED, Cookie: REDACTED },
      auth: REDACTED,
      profile: { api_key: REDACTED },
    });
    expect(redactSecrets({ wrapper: { accessToken: 'a', refreshToken: 'r', secret: 's', password: 'p' } })).toEqual({
      wrapper: { accessToken: REDACTED, refreshToken: REDACTED, secret: REDACTED, password: REDACTED },
    });
    expect(input.apiKey).toBe('sk-1');
  });

  it('leaves usage counters and ordinary keys alone, and returns untouched objects as they are', () => {
    const usage = { inputTokens: 1, outputTokens: 2, maxTokens: 3, tokenizer: 'x', authorName: 'a' };
    expect(redactSecrets(usage)).toBe(usage);
    for (const key of ['inputTokens', 'cacheReadTokens', 'outputTokens', 'author', 'tokenizer']) expect(isSecretKey(key)).toBe(false);
    const list = [1, 'two', { three: 3 }];
    expect(redactSecrets(list)).toBe(list);
    expect(redactSecrets('plain')).toBe('plain');
  });

  it('copes with cycles, errors, bigints and dates', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(redactSecrets(cyclic)).toEqual({ name: 'loop', self: '[Circular]' });
    const error = Object.assign(new Error('boom'), { code: 'E1' });
    expect(redactSecrets({ error })).toEqual({ error: { name: 'Error', message: 'boom', code: 'E1' } });
    expect(redactSecrets({ big: 10n, at: new Date(0) })).toEqual({ big: '10', at: '1970-01-01T00:00:00.000Z' });
    const shared = { v: 1 };
    expect(redactSecrets({ a: shared, b: shared })).toEqual({ a: { v: 1 }, b: { v: 1 } });
  });

  it('redacts credentials inside strings, keys and error messages, copy-on-write', () => {
    const token = `ghp_${fake(36, 90)}`;
    const input = {
      output: `GITHUB_TOKEN=${token}`,
      list: ['plain', `see ${token}`],
      byToken: { [token]: 1 },
      error: new Error(`401 with ${token}`),
      untouched: { text: 'ordinary text', inputTokens: 3 },
    };
    const redacted = redactSecrets(input);
    expect(JSON.stringify(redacted)).not.toContain(token);
    expect(redacted.output).toBe('GITHUB_TOKEN=[REDACTED:github-token]');
    expect(redacted.list).toEqual(['plain', 'see [REDACTED:github-token]']);
    expect(redacted.byToken).toEqual({ '[REDACTED:github-token]': 1 });
    expect(redacted.error).toEqual({ name: 'Error', message: '401 with [REDACTED:github-token]' });
    expect(redacted.untouched).toBe(input.untouched);
    expect(input.output).toContain(token);
  });
});
