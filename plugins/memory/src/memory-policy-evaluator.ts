import type { MemoryRefusal, SensitiveContentKind } from '@tessera/contracts';

/** A rule the evaluator applies: a finder returns the matched text, or undefined. */
interface SensitiveRule {
  readonly kind: SensitiveContentKind;
  readonly label: string;
  find(text: string): string | undefined;
}

export type MemoryPolicyDecision = { readonly allowed: true } | ({ readonly allowed: false } & MemoryRefusal);

const ALLOWED: MemoryPolicyDecision = Object.freeze({ allowed: true });

/** Values a `password=` style assignment may hold without being a secret. */
const PLACEHOLDER = /^(?:<[^>]*>?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%|process\.env\.[A-Za-z_][A-Za-z0-9_]*|\*+|x{3,}|\.{3,}|…|redacted|\[redacted\]|none|null|empty|changeme|example|your[-_a-z]*)$/i;

const regex = (pattern: RegExp) => (text: string) => pattern.exec(text)?.[0];

const RULES: readonly SensitiveRule[] = [
  { kind: 'private-key', label: 'private key block', find: regex(/-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/) },
  { kind: 'aws-access-key', label: 'AWS access key', find: regex(/\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/) },
  { kind: 'aws-secret-key', label: 'AWS secret access key', find: regex(/\baws_?secret_?(?:access_?)?key\b\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b/i) },
  { kind: 'github-token', label: 'GitHub token', find: regex(/\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b/) },
  { kind: 'gitlab-token', label: 'GitLab token', find: regex(/\bgl(?:pat|dt|rt|cbt|ptt)-[A-Za-z0-9_-]{20,}/) },
  { kind: 'slack-webhook', label: 'Slack webhook URL', find: regex(/https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]+/) },
  { kind: 'slack-token', label: 'Slack token', find: regex(/\bxox[abposr]-[A-Za-z0-9-]{10,}/) },
  { kind: 'stripe-key', label: 'Stripe key', find: regex(/\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/) },
  { kind: 'anthropic-key', label: 'Anthropic API key', find: regex(/\bsk-ant-[A-Za-z0-9_-]{20,}/) },
  { kind: 'openai-key', label: 'OpenAI API key', find: regex(/\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/) },
  { kind: 'google-api-key', label: 'Google API key', find: regex(/\bAIza[0-9A-Za-z_-]{35}\b/) },
  { kind: 'npm-token', label: 'npm token', find: regex(/\bnpm_[A-Za-z0-9]{36}\b/) },
  { kind: 'sendgrid-key', label: 'SendGrid API key', find: regex(/\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/) },
  { kind: 'jwt', label: 'JSON Web Token', find: regex(/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/) },
  { kind: 'bearer-token', label: 'bearer token', find: regex(/\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/i) },
  { kind: 'basic-auth-header', label: 'basic authorization header', find: regex(/\bAuthorization\s*:\s*Basic\s+[A-Za-z0-9+/]{8,}=*/i) },
  { kind: 'connection-string-credentials', label: 'connection string with credentials', find: regex(/\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@[^\s/]+/i) },
  { kind: 'password-assignment', label: 'password', find: assignment(/\b(?:password|passwd|passphrase|pwd)\b/i) },
  {
    kind: 'secret-assignment',
    label: 'secret or API key',
    find: assignment(/\b(?:secret|client[_-]?secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?key|account[_-]?key|token)\b/i),
  },
  { kind: 'payment-card', label: 'payment card number', find: findPaymentCard },
  { kind: 'us-ssn', label: 'US Social Security number', find: regex(/\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/) },
  { kind: 'uk-nino', label: 'UK National Insurance number', find: findNino },
  { kind: 'kr-rrn', label: 'Korean resident registration number', find: regex(/\b\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-[1-8]\d{6}\b/) },
  { kind: 'high-entropy-string', label: 'high-entropy string (a likely key or token)', find: findHighEntropy },
];

/**
 * The sensitive-content policy for memory: refuses text that holds an obvious secret, token,
 * password, private key, payment card or national id, and says which kind it saw. It errs
 * towards refusing shapes that are almost never ordinary facts, and keeps numbers, URLs
 * without credentials, hashes and code identifiers. The matched text never appears in the
 * message, so a refusal can be shown and logged safely.
 */
export class MemoryPolicyEvaluator {
  evaluate(text: string): MemoryPolicyDecision {
    for (const rule of RULES) {
      if (rule.find(text) === undefined) continue;
      return {
        allowed: false,
        kind: rule.kind,
        label: rule.label,
        message: `Not saved: the text looks like it contains a ${rule.label} (${rule.kind}). Memory files are plain text in the project; keep secrets in an environment variable or a secret manager and save only where to find them.`,
      };
    }
    return ALLOWED;
  }
}

/**
 * `name = value`, `name: value`, `"name": "value"`, with a value that is not a placeholder.
 * After a bare colon the value must look like a credential (a digit or a symbol in it), so
 * prose such as "password: rotate it monthly" is kept.
 */
function assignment(name: RegExp): (text: string) => string | undefined {
  const pattern = new RegExp(`${name.source}["']?\\s*(:|=>|=)\\s*("[^"\\n]*"|'[^'\\n]*'|[^\\s,;]+)`, 'gi');
  return (text) => {
    for (const match of text.matchAll(pattern)) {
      const quoted = /^["']/.test(match[2]!);
      const value = match[2]!.replace(/^["']|["']$/g, '');
      if (value.length < 4 || PLACEHOLDER.test(value)) continue;
      if (match[1] === ':' && !quoted && !/[\d\W_]/.test(value)) continue;
      return match[0];
    }
    return undefined;
  };
}

const CARD_PREFIX = /^(?:4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9])|35)/;

function findPaymentCard(text: string): string | undefined {
  for (const match of text.matchAll(/\b\d(?:[ -]?\d){12,18}\b/g)) {
    const digits = match[0].replace(/[ -]/g, '');
    if (digits.length >= 13 && digits.length <= 19 && CARD_PREFIX.test(digits) && luhn(digits)) return match[0];
  }
  return undefined;
}

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

function findNino(text: string): string | undefined {
  for (const match of text.matchAll(/\b([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z])\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b/g)) {
    if (!['BG', 'GB', 'NK', 'KN', 'TN', 'NT', 'ZZ'].includes(match[1]!)) return match[0];
  }
  return undefined;
}

/**
 * Runs of 32+ key-like characters that mix upper case, lower case and digits with high
 * Shannon entropy. Hex (commit hashes, UUIDs) stays below the bar; so do identifiers and paths,
 * which rarely mix all three classes with this much disorder.
 */
function findHighEntropy(text: string): string | undefined {
  for (const match of text.matchAll(/[A-Za-z0-9+/=_-]{32,}/g)) {
    const word = match[0];
    const digits = (word.match(/\d/g) ?? []).length;
    if (digits < 2 || !/[a-z]/.test(word) || !/[A-Z]/.test(word)) continue;
    if (entropy(word) >= 4.2) return word;
  }
  return undefined;
}

function entropy(word: string): number {
  const counts = new Map<string, number>();
  for (const character of word) counts.set(character, (counts.get(character) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / word.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
