import { describe, expect, it } from 'vitest';
import { fake, SHAPES } from './fake-credentials.test-helper.js';
import { mayContainSecret, redactSecretText, SecretTextStream } from './redact-text.js';

const AWS_SECRET = fake(40, 26, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+');
const PEM_BODY = Array.from({ length: 6 }, (_, line) => fake(64, 30 + line, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')).join('\n');
const BASIC = Buffer.from('deploy:correct-horse-battery').toString('base64');

describe('redactSecretText: one test per credential shape', () => {
  for (const [name, { secret, kind }] of Object.entries(SHAPES)) {
    it(`${name} → [REDACTED:${kind}]`, () => {
      for (const text of [secret, `value ${secret} in text`, `TOKEN_X=${secret}`, `{"credential":"${secret}"}`, `(${secret}).`]) {
        const redacted = redactSecretText(text);
        expect(redacted).not.toContain(secret.slice(-16));
        expect(redacted).toContain(`[REDACTED:${kind}]`);
      }
      expect(redactSecretText(`x ${secret} y`)).toBe(`x [REDACTED:${kind}] y`);
    });
  }

  it('a name in front of a known shape keeps the shape as the marker', () => {
    expect(redactSecretText(`ANTHROPIC_API_KEY=${SHAPES.anthropic.secret}`)).toBe('ANTHROPIC_API_KEY=[REDACTED:anthropic-key]');
    expect(redactSecretText(`export GITHUB_TOKEN="${SHAPES.githubClassic.secret}"`)).toBe('export GITHUB_TOKEN="[REDACTED:github-token]"');
  });

  it('AWS secret access keys after their names, in env, ini, JSON and CLI output forms', () => {
    for (const text of [
      `aws_secret_access_key = ${AWS_SECRET}`,
      `AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`,
      `"SecretAccessKey": "${AWS_SECRET}"`,
      `aws_secret_access_key: '${AWS_SECRET}'`,
    ]) {
      const redacted = redactSecretText(text);
      expect(redacted, text).not.toContain(AWS_SECRET);
      expect(redacted, text).toContain('[REDACTED:aws-secret-key]');
    }
  });

  it('Slack webhook URLs keep the host and lose the path', () => {
    const url = `https://hooks.slack.com/services/T${fake(8, 40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/B${fake(8, 41, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/${fake(24, 42)}`;
    expect(redactSecretText(`post to ${url} now`)).toBe('post to https://hooks.slack.com/[REDACTED:slack-webhook] now');
  });

  it('PEM private keys: whole blocks, and a header whose footer never came', () => {
    for (const label of ['RSA PRIVATE KEY', 'PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'EC PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'PGP PRIVATE KEY BLOCK']) {
      const block = `-----BEGIN ${label}-----\n${PEM_BODY}\n-----END ${label}-----`;
      expect(redactSecretText(`key:\n${block}\nafter`)).toBe('key:\n[REDACTED:private-key]\nafter');
    }
    const cut = redactSecretText(`-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY.slice(0, 100)}`);
    expect(cut).toBe('[REDACTED:private-key]');
    // JSON-escaped inside a string (a service-account file printed by a tool).
    const escaped = `{"private_key": "-----BEGIN PRIVATE KEY-----\\n${PEM_BODY.replace(/\n/g, '\\n')}\\n-----END PRIVATE KEY-----\\n"}`;
    expect(redactSecretText(escaped)).not.toContain(PEM_BODY.slice(0, 20));
    // A public key is not a secret.
    expect(redactSecretText(`-----BEGIN PUBLIC KEY-----\n${PEM_BODY}\n-----END PUBLIC KEY-----`)).toContain(PEM_BODY);
  });

  it('passwords in URLs: user and host stay, the password goes', () => {
    expect(redactSecretText('postgres://admin:S3cret-pass@db.internal:5432/app')).toBe('postgres://admin:[REDACTED:url-password]@db.internal:5432/app');
    expect(redactSecretText('git clone https://deploy:hunter2@git.example.com/repo.git')).toBe('git clone https://deploy:[REDACTED:url-password]@git.example.com/repo.git');
    expect(redactSecretText('redis://:only-a-password@cache:6379')).toBe('redis://:[REDACTED:url-password]@cache:6379');
  });

  it('Authorization, Bearer and Basic header text', () => {
    expect(redactSecretText('Authorization: Bearer abc123opaque')).toBe('Authorization: Bearer [REDACTED:authorization]');
    expect(redactSecretText(`curl -H 'authorization: Basic ${BASIC}' https://x`)).toBe("curl -H 'authorization: Basic [REDACTED:authorization]' https://x");
    expect(redactSecretText('{"Authorization": "Token f00dbabe"}')).toBe('{"Authorization": "Token [REDACTED:authorization]"}');
    expect(redactSecretText('Proxy-Authorization: Basic Zm9vOmJhcg==')).toBe('Proxy-Authorization: Basic [REDACTED:authorization]');
    expect(redactSecretText('sent with Bearer 9f8e7d6c5b4a and done')).toBe('sent with Bearer [REDACTED:bearer-token] and done');
    expect(redactSecretText(`header: Basic ${BASIC}`)).toBe('header: Basic [REDACTED:basic-auth]');
  });

  it('values assigned to secret-like names (isSecretKey, plus *_TOKEN)', () => {
    const cases: Array<[string, string]> = [
      ['DB_PASSWORD=hunter2-horse', 'DB_PASSWORD=[REDACTED:secret]'],
      ['{"api_key": "abcd1234efgh", "model": "x"}', '{"api_key": "[REDACTED:secret]", "model": "x"}'],
      ["client_secret: 'correct horse battery'", "client_secret: '[REDACTED:secret]'"],
      ['--password=swordfish now', '--password=[REDACTED:secret] now'],
      ['https://api.example.com/v1?access_token=abc123&page=2', 'https://api.example.com/v1?access_token=[REDACTED:secret]&page=2'],
      ['export SLACK_TOKEN=opaque-value-123', 'export SLACK_TOKEN=[REDACTED:secret]'],
      ['x-api-key: k3y-value', 'x-api-key: [REDACTED:secret]'],
      ['Cookie: session=abc; theme=dark', 'Cookie: [REDACTED:secret]'],
      ['secret := "gopher"', 'secret := "[REDACTED:secret]"'],
      ['{\\"password\\": \\"escaped\\"}', '{\\"password\\": \\"[REDACTED:secret]\\"}'],
    ];
    for (const [input, output] of cases) expect(redactSecretText(input), input).toBe(output);
  });

  it('is idempotent: markers are never matched again', () => {
    const text = [
      `ANTHROPIC_API_KEY=${SHAPES.anthropic.secret}`,
      'postgres://admin:pw-1@db/app',
      'Authorization: Bearer abc123opaque',
      '"password": "hunter2"',
      `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`,
    ].join('\n');
    const once = redactSecretText(text);
    expect(redactSecretText(once)).toBe(once);
  });
});

describe('redactSecretText: leaves ordinary text alone', () => {
  const untouched = [
    'The quick brown fox jumps over the lazy dog.',
    'usage: {"inputTokens": 1234, "outputTokens": 56, "cacheReadTokens": 0}',
    'inputTokens: 1234, max_tokens=4096, tokens_used: 17',
    'commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)',
    'sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'session 123e4567-e89b-12d3-a456-426614174000 resumed',
    'const token = getToken(); const apiKey = config.apiKey;',
    'interface Options { apiKey: string; password?: string; auth: boolean }',
    'password: ${DB_PASSWORD} and token: $GITHUB_TOKEN and secret: <your-secret> and key: ****',
    'if (token == null || token === undefined) return;',
    'Basic usage: read the docs. The bearer of this letter. Authorization: required',
    'http://localhost:8080/api and git@github.com:org/repo.git and mailto:user@example.com',
    'task-management-system-overview-document and sk-learn pipelines',
    'PWD=/home/user OLDPWD=/tmp SHELL=/bin/bash',
    'primary_key = id, sort_key: createdAt',
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk',
  ];
  for (const text of untouched) it(JSON.stringify(text.slice(0, 48)), () => expect(redactSecretText(text)).toBe(text));

  it('pays only the pre-check for text without a hint', () => {
    expect(mayContainSecret('token 12 ')).toBe(false);
    expect(mayContainSecret('plain words, numbers 1 2 3 and punctuation!')).toBe(false);
    expect(mayContainSecret('ghp_')).toBe(false);
    expect(mayContainSecret('api_key=x')).toBe(true);
  });
});

/** Every way to cut `text` into two fragments, and into pieces of a few fixed sizes. */
function splits(text: string): string[][] {
  const out: string[][] = [];
  for (let at = 1; at < text.length; at++) out.push([text.slice(0, at), text.slice(at)]);
  for (const size of [1, 2, 3, 5, 8, 13]) {
    const pieces: string[] = [];
    for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
    out.push(pieces);
  }
  return out;
}

/** Each 8-character window of `secret` after its vendor prefix: none may be written. */
function windows(body: string): string[] {
  const out: string[] = [];
  for (let at = 0; at + 8 <= body.length; at++) out.push(body.slice(at, at + 8));
  return out;
}

function streamed(pieces: string[]): string[] {
  const stream = new SecretTextStream();
  return pieces.map((piece) => stream.push(piece));
}

describe('SecretTextStream: secrets split across streamed fragments', () => {
  const prefixLength = (secret: string): number => /^(?:sk-ant-|sk-proj-|sk-|gh[pousr]_|github_pat_|glpat-|xox[bp]-|AIza|[sr]k_live_|npm_|AKIA|ASIA)/.exec(secret)?.[0].length ?? 0;
  const cases: Array<[string, string, string]> = [
    ...Object.entries(SHAPES).map(([name, { secret }]): [string, string, string] => [name, `the value ${secret} was printed`, secret.slice(prefixLength(secret))]),
    ['aws secret assignment', `aws_secret_access_key = ${AWS_SECRET}\n`, AWS_SECRET],
    ['generic assignment', 'export DB_PASSWORD=hunter2horsebattery done', 'hunter2horsebattery'],
    ['quoted JSON value', '{"client_secret": "s3cr3t value with spaces"}', 's3cr3t value with spaces'],
    ['url password', 'remote https://deploy:S3cretPassw0rd@git.example.com/repo.git', 'S3cretPassw0rd'],
    ['authorization header', 'Authorization: Bearer abcdef123456ghijkl789\n', 'abcdef123456ghijkl789'],
    ['PEM block', `key\n-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----\nafter`, PEM_BODY],
  ];
  for (const [name, text, body] of cases) {
    it(`${name}: no fragment output holds 8 characters of the secret, wherever it is cut`, () => {
      for (const pieces of splits(text)) {
        const outputs = streamed(pieces);
        const joined = outputs.join('\u0000');
        for (const window of windows(body)) if (joined.includes(window)) throw new Error(`${JSON.stringify(pieces)} leaked ${window}: ${JSON.stringify(outputs)}`);
        expect(outputs.join('')).toContain('[REDACTED:');
      }
    });
  }

  it('text around the secret survives, and the stream recovers after it', () => {
    const secret = SHAPES.githubClassic.secret;
    const outputs = streamed(['token: ', secret.slice(0, 10), secret.slice(10, 30), `${secret.slice(30)} pushed`, ' then more text']);
    expect(outputs).toEqual(['token: ', '[REDACTED:github-token]', '[REDACTED:github-token]', '[REDACTED:github-token] pushed', ' then more text']);
    const pem = streamed(['-----BEGIN PRIVATE KEY-----\n', PEM_BODY.slice(0, 70), PEM_BODY.slice(70), '\n-----END PRI', 'VATE KEY-----\nvisible']);
    expect(pem.slice(1, 4).every((output) => output === '[REDACTED:private-key]')).toBe(true);
    expect(pem[4]).toBe('[REDACTED:private-key]\nvisible');
  });

  it('passes ordinary fragments through untouched (the same strings)', () => {
    const pieces = ['Here is ', 'a plain ', 'answer with token ', 'counts: inputTokens', '=12 and a url http://localhost:8080/x', ' done.'];
    const outputs = streamed(pieces);
    outputs.forEach((output, index) => expect(output).toBe(pieces[index]));
  });

  it('documented limits: a vendor prefix cut before it is complete, and bare Bearer values', () => {
    const secret = SHAPES.githubClassic.secret;
    // `gh` alone is not a prefix yet; the rest is redacted once `ghp_…` is whole.
    expect(streamed(['see gh', secret.slice(2)])).toEqual(['see gh', '[REDACTED:github-token]']);
    // A bare `Bearer` value is recognised only once long enough (or with a digit).
    expect(streamed(['Bearer abcd', 'efghijklmnopqrstuvwxyz'])).toEqual(['Bearer abcd', '[REDACTED:bearer-token]']);
    // A digits-only URL password is not told from a port until the `@` arrives.
    expect(streamed(['https://user:1234', '5678@host'])).toEqual(['https://user:1234', '[REDACTED:url-password]@host']);
  });

  it('reset() starts a new text', () => {
    const stream = new SecretTextStream();
    expect(stream.push('PASSWORD=')).toBe('PASSWORD=');
    stream.reset();
    expect(stream.push('hunter2horse')).toBe('hunter2horse');
  });
});
