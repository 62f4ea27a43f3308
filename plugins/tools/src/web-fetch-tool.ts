import type { Provider, Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';
import { htmlToMarkdown } from './html-to-markdown.js';
import { errorText, fail, succeed } from './result.js';
import { addressRefusal, resolveHost, upgradedToHttps, type AddressPolicy, type HostResolver } from './url-policy.js';

/** `true` allows; `false` or a reason string refuses. Called for the URL and every redirect hop. */
export type UrlCheck = (url: URL) => boolean | string | Promise<boolean | string>;

export interface WebFetchToolOptions {
  /** Permission check for each URL (the first and every redirect target). Default: allow http(s). */
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
  /** Answers the prompt over the page; without one the Markdown itself is returned. */
  provider?: Provider | (() => Provider | undefined);
  /** Model for the prompt call (a small, fast one). Default: the provider's own. */
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
}

export const webFetchInputSchema = z.object({
  url: z.string().describe('The URL to fetch content from'),
  prompt: z.string().describe('The prompt to run on the fetched content'),
});

export type WebFetchInput = z.infer<typeof webFetchInputSchema>;

interface FetchedPage {
  finalUrl: string;
  status: number;
  contentType: string;
  bytes: number;
  markdown: string;
  fetchedAt: number;
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

/**
 * WebFetch: fetches a URL (redirects followed one hop at a time, each hop checked again),
 * converts HTML to Markdown, caches the page for 15 minutes, and answers `prompt` over it with
 * a model call when a provider is available — otherwise returns the Markdown.
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
  const provider = () => (typeof options.provider === 'function' ? options.provider() : options.provider);

  const upgrade = options.upgradeToHttps ?? true;
  const addressPolicy = options.blockAddresses ?? 'link-local';
  const resolver = options.resolveHost ?? resolveHost;

  /** The URL actually requested for `url`: checked, and upgraded to https where that applies. */
  async function check(given: URL): Promise<URL> {
    if (given.protocol !== 'http:' && given.protocol !== 'https:') {
      throw new FetchFailure(`Only http and https URLs can be fetched, not ${given.protocol}`, 'url_denied');
    }
    const url = upgrade ? upgradedToHttps(given) : given;
    const verdict = options.checkUrl ? await options.checkUrl(url) : true;
    if (verdict !== true) {
      throw new FetchFailure(`Fetching ${url} is not allowed${typeof verdict === 'string' ? `: ${verdict}` : ''}.`, 'url_denied');
    }
    const refusal = await addressRefusal(url, addressPolicy, resolver);
    if (refusal) throw new FetchFailure(`Fetching ${url} is not allowed: ${refusal}. (WebFetch option blockAddresses: '${addressPolicy}'.)`, 'url_denied');
    return url;
  }

  async function download(start: URL, signal: AbortSignal): Promise<FetchedPage> {
    let url = start;
    for (let hop = 0; ; hop += 1) {
      url = await check(url);
      const response = await fetchImpl(url, {
        redirect: 'manual',
        signal,
        headers: { 'user-agent': options.userAgent ?? 'Tessera-WebFetch/0.1', accept: 'text/html,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.5' },
      });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => undefined);
        if (hop >= maxRedirects) throw new FetchFailure(`Too many redirects (more than ${maxRedirects}) starting at ${start}.`, 'fetch_failed');
        url = new URL(location, url);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new FetchFailure(`${url} answered HTTP ${response.status} ${response.statusText}.`, 'fetch_failed');
      }
      const contentType = (response.headers.get('content-type') ?? 'application/octet-stream').toLowerCase();
      const body = await readLimited(response, maxBytes);
      let markdown: string;
      if (contentType.includes('html')) markdown = htmlToMarkdown(body.toString('utf8'), url.toString());
      else if (contentType.startsWith('text/') || contentType.includes('json') || contentType.includes('xml')) markdown = body.toString('utf8');
      else throw new FetchFailure(`${url} returned ${contentType}, which is not text; WebFetch reads text and HTML only.`, 'fetch_failed');
      return { finalUrl: url.toString(), status: response.status, contentType, bytes: body.length, markdown, fetchedAt: now() };
    }
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
      'HTTP URLs are upgraded to HTTPS. Redirects are followed only to URLs that are allowed. Read-only; does not run scripts.',
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
        if (cached) await check(url); // rules may have changed since the page was cached
        else {
          const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
          page = await download(url, AbortSignal.any([context.signal, timeout]));
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
      const model = provider();
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
