/** One web search hit. */
export interface SearchResult {
  title: string;
  url: string;
  snippet?: string;
}

export interface SearchRequest {
  query: string;
  /** Results wanted (a backend may return fewer). */
  count: number;
  signal: AbortSignal;
  /**
   * Only hits from these domains (and their subdomains) are wanted. Backends narrow the search
   * itself (`site:` operators), so hits beyond the unfiltered top results are found too; the
   * caller still filters what comes back.
   */
  allowedDomains?: string[];
  /** Hits from these domains (and their subdomains) are not wanted; see `allowedDomains`. */
  blockedDomains?: string[];
}

/** A domain that can stand in a `site:` operator without breaking the query (no spaces, quotes, brackets). */
function siteDomain(domain: string): string | undefined {
  const plain = domain.trim().toLowerCase();
  return /^[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)*$/u.test(plain) ? plain : undefined;
}

/**
 * `request.query` with its domain filters as search operators, in the syntax Brave and the
 * engines behind SearXNG document: `(site:a OR site:b)` for allowed domains, `-site:x` for each
 * blocked one. Domains that are not plain host names are left to the caller's post-filter.
 */
export function queryWithSites(request: Pick<SearchRequest, 'query' | 'allowedDomains' | 'blockedDomains'>): string {
  const wanted = request.allowedDomains ?? [];
  const allowed = wanted.flatMap((domain) => siteDomain(domain) ?? []);
  // Narrowing to some allowed domains would hide hits from the one that cannot be written as
  // `site:`; then the query stays wide and only the filter after the search applies.
  if (allowed.length < wanted.length) allowed.length = 0;
  const blocked = (request.blockedDomains ?? []).flatMap((domain) => siteDomain(domain) ?? []);
  const parts = [request.query.trim()];
  if (allowed.length === 1) parts.push(`site:${allowed[0]}`);
  else if (allowed.length > 1) parts.push(`(${allowed.map((domain) => `site:${domain}`).join(' OR ')})`);
  for (const domain of blocked) parts.push(`-site:${domain}`);
  return parts.join(' ');
}

/** A web search service. Adapters: `BraveSearchBackend` (API key), `SearxngSearchBackend` (self-hosted URL). */
export interface SearchBackend {
  readonly name: string;
  search(request: SearchRequest): Promise<SearchResult[]>;
}

export class SearchBackendError extends Error {
  constructor(backend: string, detail: string) {
    super(`${backend} search failed: ${detail}`);
    this.name = 'SearchBackendError';
  }
}

async function getJson(backend: string, fetchImpl: typeof fetch, url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  const response = await fetchImpl(url, { headers: { accept: 'application/json', ...headers }, signal });
  if (!response.ok) {
    const body = (await response.text().catch(() => '')).slice(0, 200);
    throw new SearchBackendError(backend, `HTTP ${response.status}${body ? `: ${body}` : ''}`);
  }
  return response.json();
}

function strings(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function stripTags(text: string): string {
  return text.replace(/<[^>]+>/g, '');
}

export interface BraveSearchBackendOptions {
  apiKey: string;
  /** Default `https://api.search.brave.com/res/v1/web/search`. */
  endpoint?: string;
  fetch?: typeof fetch;
}

/** Brave's documented limits on `q`: 400 characters and 50 words. */
const BRAVE_MAX_QUERY_CHARS = 400;
const BRAVE_MAX_QUERY_WORDS = 50;

/** Brave Search API (`X-Subscription-Token`). Domain filters go into `q` as `site:` operators. */
export class BraveSearchBackend implements SearchBackend {
  readonly name = 'brave';
  constructor(private readonly options: BraveSearchBackendOptions) {
    if (!options.apiKey) throw new TypeError('BraveSearchBackend needs an apiKey (BRAVE_SEARCH_API_KEY).');
  }

  async search(request: SearchRequest): Promise<SearchResult[]> {
    const url = new URL(this.options.endpoint ?? 'https://api.search.brave.com/res/v1/web/search');
    url.searchParams.set('q', this.query(request));
    url.searchParams.set('count', String(Math.min(20, request.count)));
    const body = await getJson(this.name, this.options.fetch ?? fetch, url, { 'x-subscription-token': this.options.apiKey }, request.signal);
    const results = strings(body) && strings(body.web) && Array.isArray(body.web.results) ? body.web.results : [];
    return results.filter(strings).flatMap((hit) =>
      typeof hit.url === 'string'
        ? [{ title: stripTags(String(hit.title ?? hit.url)), url: hit.url, ...(typeof hit.description === 'string' ? { snippet: stripTags(hit.description) } : {}) }]
        : [],
    );
  }

  /** The query with its `site:` operators, unless they would push it past Brave's limits (the post-filter then does the work). */
  private query(request: SearchRequest): string {
    const narrowed = queryWithSites(request);
    const fits = narrowed.length <= BRAVE_MAX_QUERY_CHARS && narrowed.split(/\s+/).length <= BRAVE_MAX_QUERY_WORDS;
    return fits ? narrowed : request.query;
  }
}

export interface SearxngSearchBackendOptions {
  /** The instance, e.g. `http://localhost:8888`; its JSON output format must be enabled. */
  baseUrl: string;
  fetch?: typeof fetch;
}

/**
 * A self-hosted SearXNG instance (`/search?format=json`). Domain filters go into `q` as `site:`
 * operators, which SearXNG passes on to its engines; engines that ignore them are covered by
 * WebSearch's post-filter.
 */
export class SearxngSearchBackend implements SearchBackend {
  readonly name = 'searxng';
  constructor(private readonly options: SearxngSearchBackendOptions) {
    if (!options.baseUrl) throw new TypeError('SearxngSearchBackend needs a baseUrl.');
  }

  async search(request: SearchRequest): Promise<SearchResult[]> {
    const url = new URL('search', this.options.baseUrl.endsWith('/') ? this.options.baseUrl : `${this.options.baseUrl}/`);
    url.searchParams.set('q', queryWithSites(request));
    url.searchParams.set('format', 'json');
    const body = await getJson(this.name, this.options.fetch ?? fetch, url, {}, request.signal);
    const results = strings(body) && Array.isArray(body.results) ? body.results : [];
    return results
      .filter(strings)
      .flatMap((hit) =>
        typeof hit.url === 'string'
          ? [{ title: String(hit.title ?? hit.url), url: hit.url, ...(typeof hit.content === 'string' ? { snippet: hit.content } : {}) }]
          : [],
      )
      .slice(0, request.count);
  }
}
