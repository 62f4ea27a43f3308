import type { Provider, Tool, ToolContext, ToolResult } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';
import { htmlToMarkdown } from './html-to-markdown.js';
import { errorText, fail, succeed } from './result.js';
import { addressRefusal, resolveHost, upgradedToHttps, type AddressPolicy, type HostResolver } from './url-policy.js';

/**
 * `true` allows; `false` or a reason string refuses. Called for the URL and every redirect hop,
 * and again for every hop of a cached page's redirect chain. `context` is the WebFetch call's
 * own, so a permission layer can judge each hop per session (`sessionId`, `toolCallId`).
 */
export type UrlCheck = (url: URL, context: ToolContext) => boolean | string | Promise<boolean | string>;

export interface WebFetchToolOptions {
  /** Permission check for each URL (the first, every redirect target, and every hop again on a cache hit), given the call's context. Default: allow http(s). */
  checkUrl?: UrlCheck;
  /** `http:` URLs (and redirect targets) are fetched over https, except on this machine (localhost, 127.0.0.0/8, ::1). Default true. */
  upgradeToHttps?: boolean;
  /**
   * Destinations refused by address once the host is resolved, for every hop: `link-local`
   * (default; cloud metadata at 169.254.169.254), `private` (also loopback, RFC 1918, unique
   * local…; for agents on servers) or `none`.
   */
  blockAddresses?: AddressPolicy;
  /** Host-name resolver for the address check. Default: the system resolver (`dns.lookup`). */
  resolveHost?: HostResolver;
  /** Redirect hops followed at most. Default 5. */
  maxRedirects?: number;
  /**
   * A redirect to another host name: `report` (default, as Claude Code does) returns a success
   * that names the redirect URL, so the model makes a new WebFetch call, which goes through the
   * permission rules like any other; `follow` fetches it here, guarded only by `checkUrl` and
   * the address policy — for callers that wire `checkUrl` to their permission layer.
   * Same-host redirects (scheme and port may change) are always followed.
   */
  crossHostRedirects?: 'report' | 'follow';
  /** Whole request budget in ms. Default 30,000. */
  timeoutMs?: number;
  /** Bodies larger than this are refused. Default 10 MB. */
  maxBytes?: number;
  /** Markdown characters passed on (to the model or the caller). Default 100,000. */
  maxContentChars?: number;
  /** How long a fetched page is reused. Default 15 minutes. */
  cacheTtlMs?: number;
  /** Pages cached at most. Default 50. */
  maxCacheEntries?: number;
  /**
   * Answers the prompt over the page. Without one, the session's provider
   * (`ToolContext.provider`) answers only when `model` is set, since its own model is usually
   * the large, slow one; with neither, the Markdown itself is returned.
   */
  provider?: Provider | (() => Provider | undefined);
  /** Model for the prompt call (a small, fast one); also lets the session's provider answer. Default: the provider's own. */
  model?: string;
  fetch?: typeof fetch;
  /** Clock for the cache. Default `Date.now`. */
  now?: () => number;
  userAgent?: string;
}

export interface WebFetchToolData {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  bytes: number;
  cached: boolean;
  answeredByModel: boolean;
  /** Set when the page redirected to another host and the redirect was reported, not followed. */
  redirect?: { url: string; status: number };
}

export const webFetchInputSchema = z.object({
  url: z.string().describe('The URL to fetch content from'),
  prompt: z.string().describe('The prompt to run on the fetched content'),
});

export type WebFetchInput = z.infer<typeof webFetchInputSchema>;

interface FetchedPage {
  /** Every URL requested for the page, in order (after the https upgrade): re-checked on a cache hit. */
  hops: string[];
  finalUrl: string;
  status: number;
  contentType: string;
  bytes: number;
  markdown: string;
  fetchedAt: number;
}

/** A redirect to another host, reported to the model instead of followed. Never cached. */
interface CrossHostRedirect {
  /** The URL that answered with the redirect, as requested. */
  requestedUrl: string;
  redirectUrl: string;
  status: number;
  statusText: string;
}

function isRedirectReport(result: FetchedPage | CrossHostRedirect): result is CrossHostRedirect {
  return 'redirectUrl' in result;
}

/** Whether a redirect from `from` to `to` leaves the host (names compared case-insensitively). */
function leavesHost(from: URL, to: URL): boolean {
  return (to.protocol === 'http:' || to.protocol === 'https:') && to.hostname.toLowerCase() !== from.hostname.toLowerCase();
}

/** What the model reads for a reported cross-host redirect: enough to make the next call itself. */
function redirectReportText(originalUrl: string, redirect: CrossHostRedirect, prompt: string): string {
  const status = `${redirect.status}${redirect.statusText ? ` ${redirect.statusText}` : ''}`;
  return [
    'REDIRECT DETECTED: the URL redirects to a different host, so the redirect was not followed.',
    '',
    `Original URL: ${originalUrl}`,
    `Redirect URL: ${redirect.redirectUrl}`,
    `Status: ${status}`,
    '',
    'To read the page, make a new WebFetch request with these parameters:',
    `- url: ${JSON.stringify(redirect.redirectUrl)}`,
    `- prompt: ${JSON.stringify(prompt)}`,
  ].join('\n');
}

/** A success, not an error: the redirect is a fact about the page, and the model can act on it. */
function reportRedirect(originalUrl: string, redirect: CrossHostRedirect, prompt: string): ToolResult<WebFetchToolData> {
  const data: WebFetchToolData = {
    url: originalUrl, finalUrl: redirect.requestedUrl, status: redirect.status, contentType: '', bytes: 0, cached: false, answeredByModel: false,
    redirect: { url: redirect.redirectUrl, status: redirect.status },
  };
  return succeed(redirectReportText(originalUrl, redirect, prompt), data);
}

class FetchFailure extends Error {
  constructor(message: string, readonly code: 'fetch_failed' | 'url_denied' | 'too_large') {
    super(message);
  }
}

async function readLimited(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new FetchFailure(`The response is ${declared} bytes, over the ${maxBytes}-byte limit.`, 'too_large');
  const chunks: Buffer[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new FetchFailure(`The response is over the ${maxBytes}-byte limit.`, 'too_large');
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

/** The `charset` parameter of a Content-Type value, unquoted, or undefined. */
function headerCharset(contentType: string): string | undefined {
  return /(?:^|;)\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType)?.[1];
}

/** The attributes of one start tag, names lower-cased. */
function tagAttributes(tag: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of tag.matchAll(/([^\s"'<>\/=]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    attributes.set(match[1]!.toLowerCase(), match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}

/**
 * The charset an HTML page declares in its first 2 KB: `<meta charset>` or `<meta
 * http-equiv="Content-Type" content="…; charset=…">`. A `utf-16` declaration cannot be true of
 * a page whose tags read as ASCII, so it means UTF-8, as browsers take it.
 */
function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 2048).toString('latin1');
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const attributes = tagAttributes(tag);
    const declared = attributes.get('http-equiv')?.toLowerCase() === 'content-type' ? headerCharset(attributes.get('content') ?? '') : undefined;
    const label = attributes.get('charset')?.trim() || declared;
    if (label) return /^utf-?16/i.test(label) ? 'utf-8' : label;
  }
  return undefined;
}

/** A byte-order mark names the encoding outright and outranks any declaration (WHATWG order). */
function bomCharset(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/** Code points of windows-1252 bytes 0x80–0x9F (WHATWG index); every other byte is its own code point. */
const WINDOWS_1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

/**
 * windows-1252 (also what `iso-8859-1`, `latin1` and `ascii` mean on the web) decoded by table:
 * Node 20's TextDecoder decodes it as Latin-1, turning €, curly quotes and dashes into control
 * characters (nodejs/node#56542).
 */
function decodeWindows1252(body: Buffer): string {
  return body.toString('latin1').replace(/[\u0080-\u009f]/g, (char) => String.fromCharCode(WINDOWS_1252_HIGH[char.charCodeAt(0) - 0x80]!));
}

/**
 * Text of a response body in the page's own encoding: BOM, else the Content-Type charset, else
 * (HTML) a `<meta>` declaration, else UTF-8. An unknown label falls back to UTF-8, since a page
 * with a mistyped charset is still mostly readable.
 */
function decodeBody(body: Buffer, contentType: string): string {
  const label = bomCharset(body) ?? headerCharset(contentType) ?? (contentType.includes('html') ? metaCharset(body) : undefined) ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label.trim());
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.encoding === 'windows-1252' ? decodeWindows1252(body) : decoder.decode(body);
}

/**
 * WebFetch: fetches a URL (same-host redirects followed one hop at a time, each hop checked
 * again; a redirect to another host is reported for the model to fetch with a new call),
 * decodes it in its declared charset, converts HTML to Markdown, caches the page for 15 minutes
 * (a cache hit re-checks every hop of the cached redirect chain, so a rule added since still
 * applies), and answers `prompt` over it with a model call when a provider is given, or the
 * session's provider with a `model` set — otherwise returns the Markdown.
 */
export function webFetchTool(options: WebFetchToolOptions = {}): Tool<WebFetchInput, WebFetchToolData> {
  const fetchImpl = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const maxRedirects = options.maxRedirects ?? 5;
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const maxContentChars = options.maxContentChars ?? 100_000;
  const ttl = options.cacheTtlMs ?? 15 * 60_000;
  const maxEntries = options.maxCacheEntries ?? 50;
  const cache = new Map<string, FetchedPage>();
  const reportCrossHost = (options.crossHostRedirects ?? 'report') === 'report';

  /** The provider given in the options, else the session's when a (small, fast) `model` is set. */
  function summariser(context: ToolContext): Provider | undefined {
    const given = typeof options.provider === 'function' ? options.provider() : options.provider;
    return given ?? (options.model ? context.provider : undefined);
  }

  const upgrade = options.upgradeToHttps ?? true;
  const addressPolicy = options.blockAddresses ?? 'link-local';
  const resolver = options.resolveHost ?? resolveHost;

  /** The URL actually requested for `url`: checked, and upgraded to https where that applies. */
  async function check(given: URL, context: ToolContext): Promise<URL> {
    if (given.protocol !== 'http:' && given.protocol !== 'https:') {
      throw new FetchFailure(`Only http and https URLs can be fetched, not ${given.protocol}`, 'url_denied');
    }
    const url = upgrade ? upgradedToHttps(given) : given;
    const verdict = options.checkUrl ? await options.checkUrl(url, context) : true;
    if (verdict !== true) {
      throw new FetchFailure(`Fetching ${url} is not allowed${typeof verdict === 'string' ? `: ${verdict}` : ''}.`, 'url_denied');
    }
    const refusal = await addressRefusal(url, addressPolicy, resolver);
    if (refusal) throw new FetchFailure(`Fetching ${url} is not allowed: ${refusal}. (WebFetch option blockAddresses: '${addressPolicy}'.)`, 'url_denied');
    return url;
  }

  async function download(start: URL, context: ToolContext, signal: AbortSignal): Promise<FetchedPage | CrossHostRedirect> {
    let url = start;
    const hops: string[] = [];
    for (let hop = 0; ; hop += 1) {
      url = await check(url, context);
      hops.push(url.toString());
      const response = await fetchImpl(url, {
        redirect: 'manual',
        signal,
        headers: { 'user-agent': options.userAgent ?? 'Tessera-WebFetch/0.1', accept: 'text/html,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.5' },
      });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => undefined);
        const next = new URL(location, url);
        if (reportCrossHost && leavesHost(url, next)) {
          return { requestedUrl: url.toString(), redirectUrl: next.toString(), status: response.status, statusText: response.statusText };
        }
        if (hop >= maxRedirects) throw new FetchFailure(`Too many redirects (more than ${maxRedirects}) starting at ${start}.`, 'fetch_failed');
        url = next;
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new FetchFailure(`${url} answered HTTP ${response.status} ${response.statusText}.`, 'fetch_failed');
      }
      const contentType = (response.headers.get('content-type') ?? 'application/octet-stream').toLowerCase();
      const body = await readLimited(response, maxBytes);
      let markdown: string;
      if (contentType.includes('html')) markdown = htmlToMarkdown(decodeBody(body, contentType), url.toString());
      else if (contentType.startsWith('text/') || contentType.includes('json') || contentType.includes('xml')) markdown = decodeBody(body, contentType);
      else throw new FetchFailure(`${url} returned ${contentType}, which is not text; WebFetch reads text and HTML only.`, 'fetch_failed');
      return { hops, finalUrl: url.toString(), status: response.status, contentType, bytes: body.length, markdown, fetchedAt: now() };
    }
  }

  /** Rules may have changed since the page was cached: every hop of its redirect chain must still pass. */
  async function recheck(page: FetchedPage, context: ToolContext): Promise<void> {
    for (const hop of page.hops) await check(new URL(hop), context);
  }

  function remember(key: string, page: FetchedPage): void {
    cache.delete(key);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(key, page);
  }

  return defineTool<WebFetchInput, WebFetchToolData>({
    name: 'WebFetch',
    description:
      'Fetches a URL, converts HTML to Markdown and answers the prompt about the content. Pages are cached for 15 minutes. ' +
      'HTTP URLs are upgraded to HTTPS. ' +
      (reportCrossHost
        ? 'When a URL redirects to a different host, the result names the redirect URL instead of its content: make a new WebFetch request with that URL. '
        : 'Redirects are followed only to URLs that are allowed. ') +
      'Read-only; does not run scripts.',
    inputSchema: webFetchInputSchema,
    async execute(input, context) {
      let url: URL;
      try {
        url = new URL(input.url);
      } catch {
        return fail(`Invalid URL ${JSON.stringify(input.url)}: pass a full http(s) URL.`, 'fetch_failed');
      }
      const key = url.toString();
      let page = cache.get(key);
      const cached = page !== undefined && now() - page.fetchedAt < ttl;
      try {
        if (cached) await recheck(page!, context);
        else {
          const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
          const result = await download(url, context, AbortSignal.any([context.signal, timeout]));
          if (isRedirectReport(result)) return reportRedirect(key, result, input.prompt);
          page = result;
          remember(key, page);
        }
      } catch (error) {
        if (error instanceof FetchFailure) return fail(error.message, error.code);
        if (context.signal.aborted) return fail('Fetch aborted.', 'aborted');
        const reason = (error as Error).name === 'TimeoutError' ? `timed out after ${options.timeoutMs ?? 30_000} ms` : errorText(error);
        return fail(`Could not fetch ${input.url}: ${reason}`, 'fetch_failed');
      }
      const fetched = page!;
      const content = fetched.markdown.length > maxContentChars ? `${fetched.markdown.slice(0, maxContentChars)}\n\n[Content truncated at ${maxContentChars} characters.]` : fetched.markdown;
      const data: WebFetchToolData = {
        url: key, finalUrl: fetched.finalUrl, status: fetched.status, contentType: fetched.contentType, bytes: fetched.bytes, cached, answeredByModel: false,
      };
      const model = summariser(context);
      if (model) {
        try {
          const reply = await model.stream({
            messages: [{ role: 'user', content: `Web page content from ${fetched.finalUrl}:\n---\n${content}\n---\n\n${input.prompt}\n\nAnswer from the content above only; quote sparingly.` }],
            tools: [],
            signal: context.signal,
            ...(options.model ? { model: options.model } : {}),
          });
          const answer = reply.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
          if (answer.trim() && reply.state === 'complete') return succeed(answer, { ...data, answeredByModel: true });
        } catch {
          // Fall through to the Markdown: the page is still useful without the summary.
        }
      }
      const redirected = fetched.finalUrl !== key ? ` (redirected to ${fetched.finalUrl})` : '';
      return succeed(`Content of ${key}${redirected}, as Markdown. Prompt: ${input.prompt}\n\n${content}`, data);
    },
  });
}
