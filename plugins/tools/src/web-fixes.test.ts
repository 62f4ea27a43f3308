import type { ToolContext } from '@tessera/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BraveSearchBackend, queryWithSites, SearxngSearchBackend } from './search-backends.js';
import { routedServer, text, toolContext, type RouteHandler } from './test-support.js';
import { webFetchTool } from './web-fetch-tool.js';
import { webSearchTool } from './web-search-tool.js';

let server: Awaited<ReturnType<typeof routedServer>>;
let base: string;
let routes: Map<string, RouteHandler>;
let hits: Map<string, number>;
/** The `q` parameter each fake search backend received, newest last. */
const queries: string[] = [];

function serve(path: string, contentType: string, body: Buffer): void {
  routes.set(path, (_req, res) => res.writeHead(200, { 'content-type': contentType }).end(body));
}

beforeAll(async () => {
  server = await routedServer();
  ({ base, routes, hits } = server);

  routes.set('/a', (_req, res) => res.writeHead(302, { location: '/secret' }).end());
  serve('/secret', 'text/plain', Buffer.from('secret content'));

  serve('/header-latin1', 'text/html; charset=iso-8859-1', Buffer.from('<p>café</p>', 'latin1'));
  serve('/header-quoted', 'text/plain; charset="ISO-8859-1"', Buffer.from('café', 'latin1'));
  serve('/meta-charset', 'text/html', Buffer.from('<html><head><meta charset="iso-8859-1"><title>x</title></head><body><p>café</p></body></html>', 'latin1'));
  serve(
    '/meta-http-equiv',
    'text/html',
    Buffer.concat([Buffer.from('<head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"></head><p>'), Buffer.from([0x80, 0x20, 0x93, 0x71, 0x94]), Buffer.from('</p>')]),
  );
  serve('/cp1252', 'text/plain; charset=windows-1252', Buffer.from([0x80, 0x35, 0x20, 0x93, 0x6f, 0x6b, 0x94]));
  serve('/unknown-label', 'text/plain; charset=x-no-such-charset', Buffer.from('café', 'utf8'));
  serve('/utf8-default', 'text/html', Buffer.from('<p>café ☕</p>', 'utf8'));
  serve('/bom', 'text/plain; charset=iso-8859-1', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('café', 'utf8')]));
  serve('/late-meta', 'text/html', Buffer.from(`<p>café</p><!--${' '.repeat(2100)}--><meta charset="iso-8859-1">`, 'utf8'));
  serve('/described', 'text/html', Buffer.from('<meta name="description" content="text/html; charset=iso-8859-1"><p>café</p>', 'utf8'));

  const results = JSON.stringify({
    web: {
      results: [
        { title: 'Python docs', url: 'https://docs.python.org/3/library/asyncio.html', description: 'asyncio' },
        { title: 'Elsewhere', url: 'https://blog.example.org/asyncio', description: 'off-domain' },
      ],
    },
  });
  routes.set('/brave', (req, res) => {
    queries.push(new URL(req.url!, base).searchParams.get('q') ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(results);
  });
  routes.set('/searx/search', (req, res) => {
    queries.push(new URL(req.url!, base).searchParams.get('q') ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ results: [{ title: 'Python docs', url: 'https://docs.python.org/3/', content: 'x' }, { title: 'Other', url: 'https://other.test/', content: 'y' }] }),
    );
  });
});
afterAll(() => server.close());

describe('WebFetch cache and permission checks', () => {
  it('re-checks every hop of a cached redirect chain, so a newly denied target is not served from the cache', async () => {
    const denied = new Set<string>();
    const tool = webFetchTool({ checkUrl: (url) => (denied.has(url.pathname) ? 'denied by a new rule' : true) });
    hits.set('/a', 0);
    const first = await tool.execute({ url: `${base}/a`, prompt: 'p' }, toolContext('/'));
    expect(text(first)).toContain('secret content');

    denied.add('/secret');
    const direct = await tool.execute({ url: `${base}/secret`, prompt: 'p' }, toolContext('/'));
    expect(direct).toMatchObject({ success: false, errorCode: 'url_denied' });
    const viaCache = await tool.execute({ url: `${base}/a`, prompt: 'p' }, toolContext('/'));
    expect(viaCache).toMatchObject({ success: false, errorCode: 'url_denied' });
    expect(text(viaCache)).toContain('denied by a new rule');
    expect(text(viaCache)).not.toContain('secret content');
    expect(hits.get('/a')).toBe(1);

    denied.clear();
    const again = await tool.execute({ url: `${base}/a`, prompt: 'p' }, toolContext('/'));
    expect(again.data?.cached).toBe(true);
    expect(text(again)).toContain('secret content');
  });

  it('applies the address policy again to every cached hop, as requested after the https upgrade', async () => {
    const requested: string[] = [];
    const fakeFetch = (async (url: URL | string) => {
      requested.push(String(url));
      if (String(url) === 'https://start.example.test/a') return new Response(null, { status: 302, headers: { location: 'http://inner.example.test/x' } });
      return new Response('inner page', { status: 200, headers: { 'content-type': 'text/plain' } });
    }) as typeof fetch;
    const addresses = new Map([['start.example.test', ['93.184.215.14']], ['inner.example.test', ['93.184.215.15']]]);
    const resolved: string[] = [];
    const resolveHost = async (host: string) => (resolved.push(host), addresses.get(host) ?? []);
    const checked: string[] = [];
    const tool = webFetchTool({ fetch: fakeFetch, resolveHost, crossHostRedirects: 'follow', checkUrl: (url) => (checked.push(url.toString()), true) });

    expect(text(await tool.execute({ url: 'http://start.example.test/a', prompt: 'p' }, toolContext('/')))).toContain('inner page');
    expect(requested).toEqual(['https://start.example.test/a', 'https://inner.example.test/x']);

    checked.length = 0;
    const hit = await tool.execute({ url: 'http://start.example.test/a', prompt: 'p' }, toolContext('/'));
    expect(hit.data?.cached).toBe(true);
    expect(checked).toEqual(['https://start.example.test/a', 'https://inner.example.test/x']);

    addresses.set('inner.example.test', ['169.254.169.254']);
    resolved.length = 0;
    const rebound = await tool.execute({ url: 'http://start.example.test/a', prompt: 'p' }, toolContext('/'));
    expect(rebound).toMatchObject({ success: false, errorCode: 'url_denied' });
    expect(text(rebound)).toContain('inner.example.test resolves to 169.254.169.254');
    expect(resolved).toEqual(['start.example.test', 'inner.example.test']);
    expect(requested).toHaveLength(2);
  });

  it("passes the tool call's context to checkUrl for every hop, fetched or cached", async () => {
    const seen: Array<[string, string, string]> = [];
    const tool = webFetchTool({ checkUrl: (url, context: ToolContext) => (seen.push([url.pathname, context.sessionId, context.toolCallId]), true) });
    await tool.execute({ url: `${base}/a`, prompt: 'p' }, toolContext('/', { sessionId: 'alice', toolCallId: 'call-a' }));
    await tool.execute({ url: `${base}/a`, prompt: 'p' }, toolContext('/', { sessionId: 'bob', toolCallId: 'call-b' }));
    expect(seen).toEqual([
      ['/a', 'alice', 'call-a'],
      ['/secret', 'alice', 'call-a'],
      ['/a', 'bob', 'call-b'],
      ['/secret', 'bob', 'call-b'],
    ]);
  });
});

describe('WebFetch character sets', () => {
  async function fetched(path: string): Promise<string> {
    const result = await webFetchTool().execute({ url: `${base}${path}`, prompt: 'p' }, toolContext('/'));
    expect(result.success).toBe(true);
    return text(result);
  }

  it('decodes with the Content-Type charset', async () => {
    expect(await fetched('/header-latin1')).toContain('café');
    expect(await fetched('/header-quoted')).toContain('café');
  });

  it('decodes with a <meta> charset in the first 2 KB of HTML', async () => {
    expect(await fetched('/meta-charset')).toContain('café');
    expect(await fetched('/meta-http-equiv')).toContain('€ “q”');
  });

  it('decodes windows-1252, whose 0x80–0x9F range differs from Latin-1', async () => {
    expect(await fetched('/cp1252')).toContain('€5 “ok”');
  });

  it('falls back to UTF-8 for an unknown charset label instead of failing', async () => {
    expect(await fetched('/unknown-label')).toContain('café');
  });

  it('defaults to UTF-8, lets a BOM win, and ignores late or unrelated meta tags', async () => {
    expect(await fetched('/utf8-default')).toContain('café ☕');
    const bom = await fetched('/bom');
    expect(bom).toContain('café');
    expect(bom).not.toContain('\uFEFF');
    expect(await fetched('/late-meta')).toContain('café');
    expect(await fetched('/described')).toContain('café');
  });
});

describe('WebSearch domain filters in the query', () => {
  const brave = () => webSearchTool({ backend: new BraveSearchBackend({ apiKey: 'key', endpoint: `${base}/brave` }) });
  const searx = () => webSearchTool({ backend: new SearxngSearchBackend({ baseUrl: `${base}/searx` }) });

  it('sends allowed domains to Brave as site: operators and still post-filters the hits', async () => {
    const result = await brave().execute({ query: 'asyncio', allowed_domains: ['docs.python.org'] }, toolContext('/'));
    expect(queries.at(-1)).toBe('asyncio site:docs.python.org');
    expect(result.data?.results.map((hit) => hit.url)).toEqual(['https://docs.python.org/3/library/asyncio.html']);
    await brave().execute({ query: 'asyncio', allowed_domains: ['https://docs.python.org/3/', 'peps.python.org'] }, toolContext('/'));
    expect(queries.at(-1)).toBe('asyncio (site:docs.python.org OR site:peps.python.org)');
  });

  it('sends blocked domains to Brave as -site: operators', async () => {
    const result = await brave().execute({ query: 'asyncio', blocked_domains: ['example.org', '*.spam.test'] }, toolContext('/'));
    expect(queries.at(-1)).toBe('asyncio -site:example.org -site:spam.test');
    expect(result.data?.results.map((hit) => hit.url)).toEqual(['https://docs.python.org/3/library/asyncio.html']);
  });

  it('sends the operators to SearXNG too', async () => {
    const allowed = await searx().execute({ query: 'asyncio', allowed_domains: ['docs.python.org', 'python.org'] }, toolContext('/'));
    expect(queries.at(-1)).toBe('asyncio (site:docs.python.org OR site:python.org)');
    expect(allowed.data?.results.map((hit) => hit.url)).toEqual(['https://docs.python.org/3/']);
    await searx().execute({ query: 'asyncio', blocked_domains: ['other.test'] }, toolContext('/'));
    expect(queries.at(-1)).toBe('asyncio -site:other.test');
  });

  it('leaves the query alone without filters, and keeps odd domains out of it', async () => {
    await searx().execute({ query: 'asyncio' }, toolContext('/'));
    expect(queries.at(-1)).toBe('asyncio');
    // An allowed domain that cannot be written as site: keeps the query wide (the filter after the search still applies).
    expect(queryWithSites({ query: 'q', allowedDomains: ['a.test OR evil', '(b.test)', 'ok.test'] })).toBe('q');
    expect(queryWithSites({ query: 'q', allowedDomains: ['localhost:8000', 'ok.test'] })).toBe('q');
    expect(queryWithSites({ query: 'q', allowedDomains: ['ok.test', 'two.test'] })).toBe('q (site:ok.test OR site:two.test)');
    expect(queryWithSites({ query: 'q', blockedDomains: ['bad thing', 'bad.test'] })).toBe('q -site:bad.test');
  });

  it('drops the operators for Brave when they would pass its 400-character limit', async () => {
    const many = Array.from({ length: 30 }, (_, index) => `site-number-${index}.example.test`);
    await brave().execute({ query: 'asyncio', allowed_domains: many }, toolContext('/'));
    expect(queries.at(-1)).toBe('asyncio');
  });
});
