import { isSecretKey, normaliseKey } from './secret-key.js';

/**
 * Credential shapes in free text (tool output, prompts, replies, error messages), written
 * from the vendors' published token formats. Every match is replaced by
 * `[REDACTED:<kind>]`; what surrounds the secret (a variable name, `Bearer `, a URL's user
 * and host) is kept, the secret itself never is.
 *
 * Cost model: `mayContainSecret` is two regex scans (vendor prefixes, then secret-like
 * names followed by `=`/`:` and auth words) and is all that ordinary text pays. Only text
 * that passes it runs the rules below.
 */

/** Prefixes and words without which no rule can match (case-sensitive part). */
const HINT =
  /sk-|[sr]k_(?:live|test)_|A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|soat|ffct|oas)-|xox[abposre][-.]|xapp-|hooks\.slack\.com|AIza|npm_|eyJ|-----BEGIN|PRIVATE KEY|:\/\//;
/** The case-insensitive part: auth header words, and secret-like names before `=` or `:`. */
const HINT_WORDS = /bearer|basic|authorization|(?:key|secret|token|pass|auth|credential|cookie)[\w.-]{0,64}\\?["']?[ \t]*[:=]/i;

/** False when no rule can match `text`: the cheap check every logged string goes through. */
export function mayContainSecret(text: string): boolean {
  // The shortest text any rule matches is six characters (`auth=x`, `://:x@`).
  return text.length >= 6 && (HINT.test(text) || HINT_WORDS.test(text));
}

export function redactionMarker(kind: string): string {
  return `[REDACTED:${kind}]`;
}

/**
 * How a secret that runs to the end of a streamed fragment may go on at the start of the
 * next one: a sticky pattern of the characters it can still contain, or `block` for a
 * PEM body that lasts until its END line.
 */
type Continuation = RegExp | 'block';

interface Span {
  start: number;
  end: number;
  kind: string;
  /** Rule order: on overlap, the earlier rule names the marker. */
  rank: number;
  cont: Continuation | undefined;
}

interface Rule {
  kind: string;
  /** Global. Without capture groups the whole match is the secret, otherwise the last group, which must end the match. */
  pattern: RegExp;
  cont: Continuation | undefined;
  accept?: (secret: string) => boolean;
}

const TOKEN_CONT = /[A-Za-z0-9_+/=-]*/y;
const DOTTED_CONT = /[A-Za-z0-9_+/=.~-]*/y;
const URL_PASSWORD_CONT = /[^\s/?#@"'<>\\]*/y;
const HEADER_VALUE_CONT = /[^\s"'\\,;]*/y;
const PEM_END = /-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----/g;

/** Values that are not secrets: markers, shell/template placeholders, masks. */
const PLACEHOLDER = /^(?:\[REDACTED[^\]]*\]?|\$(?:\{.*|\(.*|[A-Za-z_][A-Za-z0-9_]*)?|%[A-Za-z_][A-Za-z0-9_]*%|<[^>]*>?|\{\{[^}]*\}?\}?|\*+|x+|X+|\.+|…)$/;
/** Literals and type names an assignment of a secret-like name often has in code and schemas. */
const NOT_A_VALUE =
  /^(?:true|false|null|nil|none|undefined|yes|no|on|off|required|optional|string|number|boolean|bool|int|integer|float|str|bytes|any|unknown|object|bigint|never|void|bearer|basic|digest)$/i;
/** `config.apiKey`, `process.env.API_KEY`: a reference in code, not a value. */
const MEMBER_ACCESS = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;

/** Base64 that decodes to printable `user:password`: tells `Basic dXNlcjpwYXNz` from `Basic usage`. */
function isBasicCredential(value: string): boolean {
  if (value.length % 4 !== 0) return false;
  const decoded = Buffer.from(value, 'base64').toString('latin1');
  return decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
}

const AUTH_SCHEMES = ['bearer', 'basic', 'token', 'digest', 'bot', 'negotiate', 'ntlm', 'dpop'];
/** `Be` of a streamed `Authorization: Be|arer …`: the scheme is still arriving, not a value. */
function isSchemePrefix(value: string): boolean {
  const lower = value.toLowerCase();
  return AUTH_SCHEMES.some((scheme) => scheme.startsWith(lower));
}

/** Opaque bearer tokens: long, or with a digit (so `Bearer authentication` stays). */
function isBearerToken(value: string): boolean {
  return value.length >= 20 || (value.length >= 8 && /\d/.test(value));
}

const RULES: Rule[] = [
  // A whole PEM block, header to footer.
  { kind: 'private-key', pattern: /-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----/g, cont: undefined },
  // A header whose footer never comes (cut output, or a stream still writing the body).
  {
    kind: 'private-key',
    pattern: /-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?![\s\S]*-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----)[A-Za-z0-9+/=\s:,.\\-]*/g,
    cont: 'block',
  },
  { kind: 'anthropic-key', pattern: /(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{16,}/g, cont: TOKEN_CONT },
  { kind: 'openai-key', pattern: /(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{16,}|[A-Za-z0-9]{32,})/g, cont: TOKEN_CONT },
  { kind: 'stripe-key', pattern: /(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/g, cont: TOKEN_CONT },
  { kind: 'aws-access-key-id', pattern: /(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])/g, cont: TOKEN_CONT },
  {
    kind: 'aws-secret-key',
    pattern: /(aws_?secret_?(?:access_?)?key|secret_?access_?key)(\\?["']?[ \t]*[:=][ \t]*\\?["']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    cont: TOKEN_CONT,
  },
  { kind: 'github-token', pattern: /(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g, cont: TOKEN_CONT },
  { kind: 'gitlab-token', pattern: /(?<![A-Za-z0-9])gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|soat|ffct|oas)-[A-Za-z0-9_-]{20,}/g, cont: TOKEN_CONT },
  { kind: 'slack-token', pattern: /(?<![A-Za-z0-9])(?:xox[abposr]-|xoxe(?:\.xox[bp])?-|xapp-)[A-Za-z0-9-]{10,}/g, cont: TOKEN_CONT },
  { kind: 'slack-webhook', pattern: /(hooks\.slack\.com\/)((?:services|workflows|triggers)\/[A-Za-z0-9+/_-]+)/g, cont: TOKEN_CONT },
  { kind: 'google-api-key', pattern: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}/g, cont: TOKEN_CONT },
  { kind: 'npm-token', pattern: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g, cont: TOKEN_CONT },
  { kind: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?/g, cont: DOTTED_CONT },
  // scheme://user:password@host: the password only.
  { kind: 'url-password', pattern: /:\/\/([^\s:/?#@"'<>\\]*:)([^\s/?#@"'<>\\]+)(?=@)/g, cont: URL_PASSWORD_CONT },
  // Header text: `Authorization: Bearer …`, `"authorization": "Basic …"`, `-H 'Proxy-Authorization: …'`.
  {
    kind: 'authorization',
    pattern: /((?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?[ \t]*(?:(?:bearer|basic|token|digest|bot|negotiate|ntlm|dpop)[ \t]+)?)([^\s"'\\,;]+)/gi,
    cont: HEADER_VALUE_CONT,
    accept: (value) => !NOT_A_VALUE.test(value) && !isSchemePrefix(value),
  },
  { kind: 'bearer-token', pattern: /(?<![A-Za-z0-9_-])(bearer[ \t]+)([A-Za-z0-9._~+/-]+=*)/gi, cont: DOTTED_CONT, accept: isBearerToken },
  { kind: 'basic-auth', pattern: /(?<![A-Za-z0-9_-])(basic[ \t]+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])/gi, cont: TOKEN_CONT, accept: isBasicCredential },
];
/** Rank of `NAME=value` assignments: after every shape above, so a known shape names the marker. */
const ASSIGNMENT_RANK = RULES.length;
const ASSIGNMENT_KIND = 'secret';

/**
 * Partial secrets at the very end of a streamed fragment: a vendor prefix with part of the
 * body, which the full rules cannot recognise yet. Only `SecretTextStream` uses them.
 */
const PARTIALS: Array<{ kind: string; pattern: RegExp; cont: Continuation }> = [
  { kind: 'anthropic-key', pattern: /(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]*$/, cont: TOKEN_CONT },
  { kind: 'openai-key', pattern: /(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]*|[A-Za-z0-9]{8,})$/, cont: TOKEN_CONT },
  { kind: 'stripe-key', pattern: /(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]*$/, cont: TOKEN_CONT },
  { kind: 'aws-access-key-id', pattern: /(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{4,15}$/, cont: TOKEN_CONT },
  { kind: 'github-token', pattern: /(?<![A-Za-z0-9])(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]*$/, cont: TOKEN_CONT },
  { kind: 'gitlab-token', pattern: /(?<![A-Za-z0-9])gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|soat|ffct|oas)-[A-Za-z0-9_-]*$/, cont: TOKEN_CONT },
  { kind: 'slack-token', pattern: /(?<![A-Za-z0-9])(?:xox[abposr]-|xoxe(?:\.xox[bp])?-|xapp-)[A-Za-z0-9-]*$/, cont: TOKEN_CONT },
  { kind: 'slack-webhook', pattern: /hooks\.slack\.com\/((?:services|workflows|triggers)\/[A-Za-z0-9+/_-]*)$/, cont: TOKEN_CONT },
  { kind: 'google-api-key', pattern: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]*$/, cont: TOKEN_CONT },
  { kind: 'npm-token', pattern: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{4,35}$/, cont: TOKEN_CONT },
  { kind: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){0,2}$/, cont: DOTTED_CONT },
  // Not digits only: `https://localhost:8080` is a port, not a password.
  { kind: 'url-password', pattern: /:\/\/[^\s:/?#@"'<>\\]*:([^\s/?#@"'<>\\]*[^\s/?#@"'<>\\0-9][^\s/?#@"'<>\\]*)$/, cont: URL_PASSWORD_CONT },
];

const ASSIGNMENT = /(?:key|secret|token|pass|auth|credential|cookie)([A-Za-z0-9_.-]{0,64}?)(\\?["'])?([ \t]*)([:=])/gi;
const MAX_NAME = 64;

const VALUE_CONT = /[^\s"'`\\,;(){}[\]<>&]*/y;
const LINE_CONT = /[^\r\n"'`]*/y;
const QUOTED_CONT: Record<string, RegExp> = {
  '"': /(?:[^"\\\n]|\\.)*/y,
  "'": /(?:[^'\\\n]|\\.)*/y,
  '`': /(?:[^`\\\n]|\\.)*/y,
};
const ESCAPED_QUOTE_CONT = /[^\\\n]*/y;

function isNameChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x2d || code === 0x2e;
}

/** Where a value that starts at `from` ends: the first index `pattern` (sticky) cannot take. */
function runEnd(pattern: RegExp, text: string, from: number): number {
  pattern.lastIndex = from;
  pattern.test(text);
  return pattern.lastIndex;
}

/** `NAME=value`, `NAME: value`, `"name": "value"`, `--name=value`, `?name=value` with a secret-like NAME. */
function collectAssignments(text: string, spans: Span[]): void {
  ASSIGNMENT.lastIndex = 0;
  for (let match: RegExpExecArray | null; (match = ASSIGNMENT.exec(text)); ) {
    const separatorAt = match.index + match[0].length - 1;
    const nameEnd = separatorAt - match[3]!.length - (match[2]?.length ?? 0);
    let nameStart = match.index;
    while (nameStart > 0 && nameEnd - nameStart < MAX_NAME && isNameChar(text.charCodeAt(nameStart - 1))) nameStart--;
    const name = text.slice(nameStart, nameEnd);
    const normalised = normaliseKey(name);
    // `GITHUB_TOKEN`, `oauth_token` are secrets in text even though `token` alone is too short a key part.
    const strict = isSecretKey(name) || normalised.includes('passphrase');
    // `Authorization` values (after their scheme) belong to the header rule.
    if ((!strict && !normalised.endsWith('token')) || normalised.endsWith('authorization')) continue;

    let at = separatorAt + 1;
    const next = text.charCodeAt(at);
    if (match[4] === '=') {
      if (next === 0x3d || next === 0x3e || next === 0x7e) continue; // `==`, `=>`, `=~`
    } else if (next === 0x3a || (next === 0x2f && text.charCodeAt(at + 1) === 0x2f)) continue; // `::`, `://`
    else if (next === 0x3d) at++; // `:=`
    while (text.charCodeAt(at) === 0x20 || text.charCodeAt(at) === 0x09) at++;

    let cont: RegExp;
    const first = text[at];
    if (first === '\\' && (text[at + 1] === '"' || text[at + 1] === "'")) {
      at += 2;
      cont = ESCAPED_QUOTE_CONT;
    } else if (first === '"' || first === "'" || first === '`') {
      at += 1;
      cont = QUOTED_CONT[first]!;
    } else cont = normalised === 'cookie' || normalised === 'setcookie' ? LINE_CONT : VALUE_CONT;
    const end = runEnd(cont, text, at);
    const value = text.slice(at, end);
    if (value === '' || PLACEHOLDER.test(value) || NOT_A_VALUE.test(value) || normaliseKey(value) === normalised) continue;
    if (cont === VALUE_CONT) {
      const after = text.charCodeAt(end);
      // A call or an index in code: `token = getToken()`, `key: env["KEY"]`.
      if (after === 0x28 || after === 0x5b || MEMBER_ACCESS.test(value)) continue;
    }
    if (!strict && (value.length < 8 || /^\d+$/.test(value))) continue;
    spans.push({ start: at, end, kind: ASSIGNMENT_KIND, rank: ASSIGNMENT_RANK, cont });
  }
}

function collect(text: string, spans: Span[]): void {
  for (let rank = 0; rank < RULES.length; rank++) {
    const rule = RULES[rank]!;
    const { pattern } = rule;
    pattern.lastIndex = 0;
    for (let match: RegExpExecArray | null; (match = pattern.exec(text)); ) {
      const end = match.index + match[0].length;
      const secret = match.length > 1 ? match[match.length - 1]! : match[0];
      if (secret === '' || PLACEHOLDER.test(secret) || (rule.accept && !rule.accept(secret))) continue;
      spans.push({ start: end - secret.length, end, kind: rule.kind, rank, cont: rule.cont });
    }
  }
  collectAssignments(text, spans);
}

/** Sorted, overlaps joined (the earliest rule names the marker). */
function merge(spans: Span[]): Span[] {
  if (spans.length > 1) spans.sort((a, b) => a.start - b.start || a.rank - b.rank);
  const merged: Span[] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.start < last.end) {
      if (span.end > last.end) {
        last.end = span.end;
        last.cont = span.cont;
      }
      if (span.rank < last.rank) {
        last.rank = span.rank;
        last.kind = span.kind;
      }
    } else merged.push(span);
  }
  return merged;
}

/** `fragment` (which starts at `offset` in the scanned text) with every span over it replaced by its marker. */
function apply(fragment: string, spans: readonly Span[], offset: number): string {
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.end <= offset) continue;
    const start = Math.max(span.start, offset) - offset;
    out += fragment.slice(at, start) + redactionMarker(span.kind);
    at = span.end - offset;
  }
  return at === 0 && out === '' ? fragment : out + fragment.slice(at);
}

/**
 * `text` with every recognised credential replaced by `[REDACTED:<kind>]`: Anthropic,
 * OpenAI, Stripe, AWS (access key ids, `aws_secret_access_key = …`), GitHub, GitLab, Slack
 * (tokens, webhook URLs), Google API keys, npm tokens, JWTs, PEM private keys, URL
 * passwords, `Authorization`/`Bearer`/`Basic` header values, and values assigned to
 * secret-like names (`API_KEY=…`, `"password": "…"`). Returns `text` itself when nothing
 * matched; idempotent (markers are never matched again).
 */
export function redactSecretText(text: string): string {
  if (text.length < CACHED_CHARS) return redact(text);
  // One reply is logged several times (raw and normalised response, history, `assistant`):
  // a repeat costs a comparison (a pointer check for the same string) instead of a scan.
  for (let index = 0; index < CACHE_SIZE; index++) if (cachedInputs[index] === text) return cachedOutputs[index]!;
  const output = redact(text);
  cachedInputs[cacheNext] = text;
  cachedOutputs[cacheNext] = output;
  cacheNext = (cacheNext + 1) % CACHE_SIZE;
  return output;
}

/** Strings at least this long are remembered, the last CACHE_SIZE of them. */
const CACHED_CHARS = 1024;
const CACHE_SIZE = 4;
const cachedInputs: Array<string | undefined> = new Array<string | undefined>(CACHE_SIZE).fill(undefined);
const cachedOutputs: Array<string | undefined> = new Array<string | undefined>(CACHE_SIZE).fill(undefined);
let cacheNext = 0;

function redact(text: string): string {
  if (!mayContainSecret(text)) return text;
  const spans: Span[] = [];
  collect(text, spans);
  return spans.length === 0 ? text : apply(text, merge(spans), 0);
}

/** Longest unbroken run (no whitespace) kept from one fragment for the next. */
const MAX_RUN = 256;
/** Text kept before that run when the fragment held a hint (`Authorization: Bearer `, `password = `). */
const CONTEXT = 96;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** A word holding a secret-like name part (sticky: tested from the word's start). */
const NAME_WORD = /\S*?(?:key|secret|token|pass|auth|credential|cookie)/iy;

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/**
 * Redacts a text that arrives in fragments (streamed deltas), fragment by fragment, so
 * that a secret split across fragments is still caught:
 *
 * - each fragment is scanned together with the end of the previous one (its last
 *   unbroken run; a last word with a secret-like name part and the blanks after it; up
 *   to 96 more characters before that when the text held a hint), so a
 *   secret or a `NAME=` whose start was in the previous fragment is found, and its part
 *   in this fragment redacted;
 * - a fragment that ends inside a secret (a recognised one, a `NAME=` value, or a vendor
 *   prefix with a partial body such as `ghp_12ab`) has that part redacted at once, and
 *   the characters that continue it at the start of the next fragment are redacted too;
 * - a PEM block stays redacted, fragment after fragment, until its END line.
 *
 * Each fragment's output has the fragment's own text with markers in place of the secret
 * parts, so the concatenated output may show one marker per fragment a secret touched.
 * Not covered: a vendor prefix cut before it is complete (`gh` | `p_…` leaves `gh`), bare
 * `Bearer`/`Basic` values (without an `Authorization` name), which are recognised only
 * once the part seen so far qualifies, and digits-only URL passwords, which cannot be told
 * from a port before their `@` arrives: their first fragment can keep part of the secret.
 */
export class SecretTextStream {
  private tail = '';
  private open: Continuation | undefined;
  private openKind = '';

  /** Starts a new text: nothing carries over from earlier fragments. */
  reset(): void {
    this.tail = '';
    this.open = undefined;
  }

  push(fragment: string): string {
    if (fragment === '') return fragment;
    const offset = this.tail.length;
    const text = offset === 0 ? fragment : this.tail + fragment;
    let spans: Span[] | undefined;
    if (this.open !== undefined) {
      const end = this.continuationEnd(text, offset);
      if (end > offset) spans = [{ start: offset, end, kind: this.openKind, rank: -1, cont: this.open }];
    }
    const hinted = mayContainSecret(text);
    // The last word, and the spaces after it (`NAME ` | `= value` needs `NAME`).
    let wordEnd = text.length;
    while (wordEnd > 0 && text.length - wordEnd < MAX_RUN && isBlank(text.charCodeAt(wordEnd - 1))) wordEnd--;
    let wordStart = wordEnd;
    const limit = Math.max(0, wordEnd - MAX_RUN);
    while (wordStart > limit && !isSpace(text.charCodeAt(wordStart - 1))) wordStart--;
    if (hinted) {
      spans ??= [];
      collect(text, spans);
      // A partial secret can only be an unbroken run up to the very end.
      if (wordEnd === text.length && wordStart < wordEnd) {
        const run = wordStart === 0 ? text : text.slice(wordStart);
        for (const partial of PARTIALS) {
          const match = partial.pattern.exec(run);
          if (!match) continue;
          const secret = match.length > 1 ? match[1]! : match[0];
          if (secret !== '' && !PLACEHOLDER.test(secret)) spans.push({ start: text.length - secret.length, end: text.length, kind: partial.kind, rank: -1, cont: partial.cont });
        }
      }
    }
    this.open = undefined;
    let out = fragment;
    if (spans !== undefined && spans.length > 0) {
      const merged = merge(spans);
      out = apply(fragment, merged, offset);
      const last = merged[merged.length - 1]!;
      if (last.end === text.length && last.cont !== undefined) {
        this.open = last.cont;
        this.openKind = last.kind;
      }
    }
    let keepFrom: number;
    if (hinted || this.open !== undefined) keepFrom = Math.max(0, wordStart - CONTEXT);
    else if (wordEnd === text.length) keepFrom = wordStart;
    else {
      // Blanks after the last word matter only when it may be a secret-like name (`PASSWORD ` | `= …`).
      NAME_WORD.lastIndex = wordStart;
      keepFrom = wordStart < wordEnd && NAME_WORD.test(text) ? wordStart : text.length;
    }
    this.tail = keepFrom >= text.length ? '' : text.slice(keepFrom);
    return out;
  }

  /** Where the secret left open by the previous fragment ends in `text` (at least `offset`). */
  private continuationEnd(text: string, offset: number): number {
    const open = this.open!;
    if (open !== 'block') return runEnd(open, text, offset);
    // The footer may have been split: look from a little before this fragment.
    PEM_END.lastIndex = Math.max(0, offset - 64);
    for (let match: RegExpExecArray | null; (match = PEM_END.exec(text)); ) {
      const end = match.index + match[0].length;
      if (end > offset) return end;
    }
    return text.length;
  }
}
