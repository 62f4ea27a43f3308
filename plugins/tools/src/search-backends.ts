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

/** Brave Search API (`X-Subscription-Token`). */
export class BraveSearchBackend implements SearchBackend {
  readonly name = 'brave';
  constructor(private readonly options: BraveSearchBackendOptions) {
    if (!options.apiKey) throw new TypeError('BraveSearchBackend needs an apiKey (BRAVE_SEARCH_API_KEY).');
  }

  async search(request: SearchRequest): Promise<SearchResult[]> {
    const url = new URL(this.options.endpoint ?? 'https://api.search.brave.com/res/v1/web/search');
    url.searchParams.set('q', request.query);
    url.searchParams.set('count', String(Math.min(20, request.count)));
    const body = await getJson(this.name, this.options.fetch ?? fetch, url, { 'x-subscription-token': this.options.apiKey }, request.signal);
    const results = strings(body) && strings(body.web) && Array.isArray(body.web.results) ? body.web.results : [];
    return results.filter(strings).flatMap((hit) =>
      typeof hit.url === 'string'
        ? [{ title: stripTags(String(hit.title ?? hit.url)), url: hit.url, ...(typeof hit.description === 'string' ? { snippet: stripTags(hit.description) } : {}) }]
        : [],
    );
  }
}

export interface SearxngSearchBackendOptions {
  /** The instance, e.g. `http://localhost:8888`; its JSON output format must be enabled. */
  baseUrl: string;
  fetch?: typeof fetch;
}

/** A self-hosted SearXNG instance (`/search?format=json`). */
export class SearxngSearchBackend implements SearchBackend {
  readonly name = 'searxng';
  constructor(private readonly options: SearxngSearchBackendOptions) {
    if (!options.baseUrl) throw new TypeError('SearxngSearchBackend needs a baseUrl.');
  }

  async search(request: SearchRequest): Promise<SearchResult[]> {
    const url = new URL('search', this.options.baseUrl.endsWith('/') ? this.options.baseUrl : `${this.options.baseUrl}/`);
    url.searchParams.set('q', request.query);
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
