import type { Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';
import { errorText, fail, succeed } from './result.js';
import type { SearchBackend, SearchResult } from './search-backends.js';

export interface WebSearchToolOptions {
  /** The search service; without one the tool explains that search is not configured. */
  backend?: SearchBackend;
  /** Results shown at most. Default 10. */
  maxResults?: number;
  /** Per-search budget in ms. Default 20,000. */
  timeoutMs?: number;
}

export interface WebSearchToolData {
  query: string;
  backend: string;
  results: SearchResult[];
}

export const webSearchInputSchema = z.object({
  query: z.string().min(2).describe('The search query to use'),
  allowed_domains: z.array(z.string()).optional().describe('Only include search results from these domains'),
  blocked_domains: z.array(z.string()).optional().describe('Never include search results from these domains'),
});

export type WebSearchInput = z.infer<typeof webSearchInputSchema>;

function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/^https?:\/\//, '').replace(/\/.*$/, '').replace(/^\*\./, '').replace(/^www\./, '');
}

/** The domains as plain host names (scheme, path, `*.` and `www.` dropped), for the backend's `site:` operators. */
function domainList(domains: string[]): string[] {
  return [...new Set(domains.map(normalizeDomain).filter((domain) => domain.length > 0))];
}

/** `example.com` covers `example.com` and every subdomain of it. */
export function hostMatches(url: string, domain: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return false;
  }
  const wanted = normalizeDomain(domain);
  return wanted.length > 0 && (host === wanted || host.endsWith(`.${wanted}`));
}

/**
 * WebSearch: asks a `SearchBackend`, passing the domain filters on so the search itself is
 * narrowed, and filters the hits by domain again (backends and engines may ignore operators).
 * Without a backend it fails with an explanation (providers with hosted web search take over
 * in that case).
 */
export function webSearchTool(options: WebSearchToolOptions = {}): Tool<WebSearchInput, WebSearchToolData> {
  const maxResults = options.maxResults ?? 10;
  return defineTool<WebSearchInput, WebSearchToolData>({
    name: 'WebSearch',
    description:
      'Searches the web and returns result titles, URLs and snippets. Use allowed_domains or blocked_domains to restrict sources. ' +
      'Cite the URLs you use.',
    inputSchema: webSearchInputSchema,
    async execute(input, context) {
      const backend = options.backend;
      if (!backend) {
        return fail(
          'WebSearch is not configured: no search backend was given (webSearch.backend, e.g. BraveSearchBackend or SearxngSearchBackend). ' +
            'Answer from what you know, or use WebFetch on a known URL.',
          'unavailable',
        );
      }
      const allowed = input.allowed_domains ?? [];
      const blocked = input.blocked_domains ?? [];
      if (allowed.length > 0 && blocked.length > 0) {
        return fail('Use either allowed_domains or blocked_domains, not both.', 'invalid_pattern');
      }
      const filtered = allowed.length > 0 || blocked.length > 0;
      let results: SearchResult[];
      try {
        const signal = AbortSignal.any([context.signal, AbortSignal.timeout(options.timeoutMs ?? 20_000)]);
        results = await backend.search({
          query: input.query,
          count: filtered ? maxResults * 3 : maxResults,
          signal,
          ...(allowed.length > 0 ? { allowedDomains: domainList(allowed) } : {}),
          ...(blocked.length > 0 ? { blockedDomains: domainList(blocked) } : {}),
        });
      } catch (error) {
        if (context.signal.aborted) return fail('Search aborted.', 'aborted');
        return fail(`Web search failed (${backend.name}): ${errorText(error)}`, 'search_failed');
      }
      const kept = results
        .filter((hit) => (allowed.length === 0 || allowed.some((domain) => hostMatches(hit.url, domain))) && !blocked.some((domain) => hostMatches(hit.url, domain)))
        .slice(0, maxResults);
      const data: WebSearchToolData = { query: input.query, backend: backend.name, results: kept };
      if (kept.length === 0) return succeed(`No web results for "${input.query}"${filtered ? ' within the domain filters' : ''}.`, data);
      const lines = kept.map((hit, index) => `${index + 1}. ${hit.title}\n   ${hit.url}${hit.snippet ? `\n   ${hit.snippet.replace(/\s+/g, ' ').trim()}` : ''}`);
      return succeed(`Web search results for "${input.query}":\n\n${lines.join('\n\n')}`, data);
    },
  });
}
