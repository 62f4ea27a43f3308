import { describe, expect, it } from 'vitest';
import { MemoryPolicyEvaluator, luhn } from './memory-policy-evaluator.js';

// Secret-shaped samples are assembled from parts so that secret scanners do not flag this file.
const join = (...parts: string[]) => parts.join('');
const mixed = 'q7Rt2ZpL9xKc4VbN8mWd3HsJ6fGy1TaE5uPo0iQe';

const REFUSED: ReadonlyArray<[kind: string, text: string]> = [
  ['aws-access-key', join('deploy uses ', 'AKIA', 'IOSFODNN7EXAMPLE')],
  ['aws-access-key', join('temporary creds ', 'ASIA', 'Y34FZKBOKMUTVV7A')],
  ['aws-secret-key', join('aws_secret_access_key = ', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')],
  ['github-token', join('token for CI is ', 'ghp_', 'a'.repeat(36))],
  ['github-token', join('github_pat_', '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz')],
  ['gitlab-token', join('use ', 'glpat-', 'xYz12345abcdEFGH6789')],
  ['slack-token', join('bot ', 'xoxb-', '1234567890-0987654321-AbCdEfGhIjKl')],
  ['slack-webhook', join('https://hooks.slack.com/services/', 'T0000000/B0000000/', 'XXXXXXXXXXXXXXXXXXXXXXXX')],
  ['stripe-key', join('billing ', 'sk_', 'live_', '4eC39HqLyjWDarjtT1zdp7dc')],
  ['openai-key', join('OPENAI ', 'sk-', 'proj-', 'abcdefghijklmnopqrstuvwxyz012345')],
  ['anthropic-key', join('key ', 'sk-ant-', 'api03-', 'abcdefghijklmnopqrstuvwxyz')],
  ['google-api-key', join('maps ', 'AIza', 'SyD-1234567890abcdefghijklmnopqrstu')],
  ['npm-token', join('publish with ', 'npm_', 'abcdefghijklmnopqrstuvwxyz0123456789')],
  ['sendgrid-key', join('SG.', 'abcdefghijklmnopqrstuv', '.', 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG')],
  ['jwt', join('session cookie ', 'eyJhbGciOiJIUzI1NiJ9', '.', 'eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.', 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U')],
  ['private-key', join('-----BEGIN ', 'RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA')],
  ['private-key', join('-----BEGIN ', 'OPENSSH PRIVATE KEY-----')],
  ['private-key', join('-----BEGIN ', 'PGP PRIVATE KEY BLOCK-----')],
  ['password-assignment', 'the staging password=hunter2'],
  ['password-assignment', 'passwd: s3cr3t-Value'],
  ['password-assignment', 'config has "password": "correct horse battery"'],
  ['secret-assignment', 'secret: Zx9!kq2w'],
  ['secret-assignment', 'client_secret = abcd1234efgh'],
  ['secret-assignment', 'API_KEY=live-abc-123'],
  ['bearer-token', join('curl -H "Authorization: Bearer ', 'abcdef0123456789ABCDEF"')],
  ['basic-auth-header', join('Authorization: Basic ', 'dXNlcjpwYXNzd29yZA==')],
  ['connection-string-credentials', 'db is postgres://admin:pa55word@db.internal:5432/app'],
  ['connection-string-credentials', 'mongodb+srv://svc:Tr0ub4dor@cluster0.example.net/test'],
  ['payment-card', 'card 4111 1111 1111 1111 on file'],
  ['payment-card', 'amex 3782-822463-10005'],
  ['payment-card', 'mc 5555555555554444'],
  ['us-ssn', 'ssn 123-45-6789'],
  ['uk-nino', 'NI number AB 12 34 56 C'],
  ['kr-rrn', 'resident number 900101-1234567'],
  ['high-entropy-string', `cache key ${mixed}`],
];

const KEPT: readonly string[] = [
  'Use npm workspaces; run `npx vitest run plugins/memory` before pushing.',
  'The API listens on port 8080 and the admin UI on 3000.',
  'Docs live at https://docs.example.com/guide/getting-started#install',
  'Release 2.14.0 shipped on 2024-05-01 with 37 fixes.',
  'Fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39.',
  'Session ids look like 7c9e6679-7425-40de-944b-e07fc1f98c8e.',
  'createSessionServiceFactoryContributionForProjectMemory is the helper name.',
  'Files: plugins/memory/src/default-project-memory.ts and contracts/src/memory.ts',
  'Password rules: rotate it monthly, never share it.',
  'Store the token in the GITHUB_TOKEN environment variable, not in memory.',
  'password=${DB_PASSWORD} is read from the environment.',
  'api_key: <your key here>',
  'The order number 1234 5678 9012 3456 is not a card.',
  'Phone support: +44 20 7946 0958.',
  'Prefer `const` over `let`; max line length is 120.',
  'Build time dropped from 94s to 41s after caching node_modules.',
  'Connect to postgres://db.internal:5432/app with IAM auth.',
  'Tokens are refreshed every 15 minutes by the auth service.',
  'The secret sauce is small plugins.',
  'sk-learn is not used; we use scikit-learn 1.4.',
];

describe('MemoryPolicyEvaluator', () => {
  const policy = new MemoryPolicyEvaluator();

  it(`refuses ${REFUSED.length} secret shapes, naming the kind`, () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(20);
  });

  it.each(REFUSED)('refuses %s: %s', (kind, text) => {
    const decision = policy.evaluate(text);
    expect(decision).toMatchObject({ allowed: false, kind });
    if (decision.allowed) return;
    expect(decision.message).toContain(decision.label);
    expect(decision.message).toContain(kind);
  });

  it.each(KEPT)('keeps an ordinary fact: %s', (text) => {
    expect(policy.evaluate(text)).toEqual({ allowed: true });
  });

  it('never repeats the matched secret in its message', () => {
    const decision = policy.evaluate('password=hunter2');
    expect(decision.allowed === false && decision.message).not.toContain('hunter2');
  });

  it('checks card numbers with Luhn', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
    expect(policy.evaluate('card 4111 1111 1111 1112')).toEqual({ allowed: true });
  });
});
