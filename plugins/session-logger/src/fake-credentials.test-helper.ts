/**
 * Fake credentials in the vendors' token formats, generated at run time so that no
 * vendor-token literal sits in the sources (secret scanners stay quiet). None of them is,
 * or was, a real key.
 */

/** Deterministic pseudo-random text from `alphabet` (fake credentials: never real ones). */
export function fake(length: number, seed: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'): string {
  let state = (Math.imul(seed, 0x9e3779b1) ^ 0x5bd1e995) >>> 0 || 1;
  let out = '';
  for (let index = 0; index < length; index++) {
    // xorshift32
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    out += alphabet[state % alphabet.length];
  }
  return out;
}
const base64url = (text: string): string => Buffer.from(text).toString('base64url');

/** One fake credential per shape: the full secret, and the part that must never be written. */
export const SHAPES = {
  anthropic: { secret: `sk-ant-api03-${fake(93, 1, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}AA`, kind: 'anthropic-key' },
  openaiProject: { secret: `sk-proj-${fake(64, 2, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`, kind: 'openai-key' },
  openaiLegacy: { secret: `sk-${fake(48, 3)}`, kind: 'openai-key' },
  awsAccessKeyId: { secret: `AKIA${fake(16, 4, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`, kind: 'aws-access-key-id' },
  awsSessionKeyId: { secret: `ASIA${fake(16, 5, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`, kind: 'aws-access-key-id' },
  githubClassic: { secret: `ghp_${fake(36, 6)}`, kind: 'github-token' },
  githubOauth: { secret: `gho_${fake(36, 7)}`, kind: 'github-token' },
  githubUser: { secret: `ghu_${fake(36, 8)}`, kind: 'github-token' },
  githubServer: { secret: `ghs_${fake(36, 9)}`, kind: 'github-token' },
  githubRefresh: { secret: `ghr_${fake(36, 10)}`, kind: 'github-token' },
  githubFineGrained: { secret: `github_pat_${fake(22, 11)}_${fake(59, 12)}`, kind: 'github-token' },
  gitlab: { secret: `glpat-${fake(20, 13, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`, kind: 'gitlab-token' },
  slackBot: { secret: `xoxb-${fake(12, 14, '0123456789')}-${fake(13, 15, '0123456789')}-${fake(24, 16)}`, kind: 'slack-token' },
  slackUser: { secret: `xoxp-${fake(12, 17, '0123456789')}-${fake(12, 18, '0123456789')}-${fake(13, 19, '0123456789')}-${fake(32, 20, '0123456789abcdef')}`, kind: 'slack-token' },
  google: { secret: `AIza${fake(35, 21, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`, kind: 'google-api-key' },
  stripeSecret: { secret: `sk_live_${fake(24, 22)}`, kind: 'stripe-key' },
  stripeRestricted: { secret: `rk_live_${fake(24, 23)}`, kind: 'stripe-key' },
  npm: { secret: `npm_${fake(36, 24)}`, kind: 'npm-token' },
  jwt: {
    secret: `${base64url('{"alg":"HS256","typ":"JWT"}')}.${base64url('{"sub":"1234567890","name":"Ada","iat":1516239022}')}.${fake(43, 25, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`,
    kind: 'jwt',
  },
} as const;

