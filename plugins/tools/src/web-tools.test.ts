import type { ProviderRequest } from '@tessera/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlToMarkdown } from './html-to-markdown.js';
import { BraveSearchBackend, SearxngSearchBackend } from './search-backends.js';
import { replyProvider, routedServer, text, toolContext, type RouteHandler } from './test-support.js';
import { webFetchTool } from './web-fetch-tool.js';
import { hostMatches, webSearchTool } from './web-search-tool.js';

let server: Awaited<ReturnType<typeof routedServer>>;
let base: string;
let routes: Map<string, RouteHandler>;
let hits: Map<string, number>;

beforeAll(async () => {
  server = await routedServer();
  ({ base, routes, hits } = server);
  routes.set('/page', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><head><title>Doc</title><script>alert(1)</script></head><body><h1>Hello</h1><p>Read <a href="/more">more</a> &amp; <b>bold</b>.</p><ul><li>one</li><li>two</li></ul></body></html>');
  });
  routes.set('/plain', (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('just text'));
  routes.set('/hop1', (_req, res) => res.writeHead(302, { location: '/hop2' }).end());
  routes.set('/hop2', (_req, res) => res.writeHead(301, { location: `${base}/plain` }).end());
  routes.set('/to-forbidden', (_req, res) => res.writeHead(302, { location: '/forbidden' }).end());
  routes.set('/forbidden', (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('secret'));
  routes.set('/to-metadata', (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end());
  routes.set('/to-internal-name', (_req, res) => res.writeHead(302, { location: 'http://metadata.internal.test/' }).end());
  routes.set('/loop', (_req, res) => res.writeHead(302, { location: '/loop' }).end());
  routes.set('/big', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('x'.repeat(5000));
  });
  routes.set('/binary', (_req, res) => res.writeHead(200, { 'content-type': 'application/zip' }).end('PK'));
  routes.set('/slow', (_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 2000);
  });
  routes.set('/brave', (req, res) => {
    const url = new URL(req.url!, base);
    if (req.headers['x-subscription-token'] !== 'key-1') return void res.writeHead(401).end('bad key');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      web: {
        results: [
          { title: `About <strong>${url.searchParams.get('q')}</strong>`, url: 'https://docs.example.com/a', description: 'first <em>hit</em>' },
          { title: 'Blog', url: 'https://blog.other.org/b', description: 'second' },
          { title: 'Root', url: 'https://www.example.com/', description: 'third' },
        ],
      },
    }));
  });
  routes.set('/searx/search', (req, res) => {
    const url = new URL(req.url!, base);
    expect(url.searchParams.get('format')).toBe('json');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ results: [{ title: 'Searx hit', url: 'https://searx.example.net/x', content: `for ${url.searchParams.get('q')}` }] }));
  });
});
afterAll(() => server.close());

describe('htmlToMarkdown', () => {
  it('converts common elements and drops scripts', () => {
    const md = htmlToMarkdown(
      '<title>T</title><h2>Head</h2><p>A <em>b</em> <code>c()</code></p><pre><code>x  = 1\ny</code></pre><ol><li>first</li><li>second</li></ol>' +
        '<blockquote>quoted</blockquote><img src="/i.png" alt="pic"><a href="rel">link</a><script>bad()</script><style>.x{}</style>',
      'https://site.test/dir/',
    );
    expect(md).toBe(
      '# T\n\n## Head\n\nA *b* `c()`\n\n```\nx  = 1\ny\n```\n\n1. first\n2. second\n\n> quoted\n\n![pic](https://site.test/i.png)[link](https://site.test/dir/rel)',
    );
  });
});

describe('WebFetch', () => {
  it('fetches HTML as Markdown when no provider is configured', async () => {
    const result = await webFetchTool().execute({ url: `${base}/page`, prompt: 'summarise' }, toolContext('/'));
    expect(result.success).toBe(true);
    expect(text(result)).toContain('# Hello');
    expect(text(result)).toContain(`Read [more](${base}/more) & **bold**.`);
    expect(text(result)).toContain('- one\n- two');
    expect(text(result)).not.toContain('alert');
    expect(result.data).toMatchObject({ status: 200, answeredByModel: false, cached: false });
  });

  it('answers the prompt through the provider', async () => {
    const seen: ProviderRequest[] = [];
    const tool = webFetchTool({ provider: replyProvider('It says hello.', seen), model: 'small-model' });
    const result = await tool.execute({ url: `${base}/page`, prompt: 'What does it say?' }, toolContext('/'));
    expect(text(result)).toBe('It says hello.');
    expect(result.data?.answeredByModel).toBe(true);
    expect(seen[0]?.model).toBe('small-model');
    expect(JSON.stringify(seen[0]?.messages)).toContain('What does it say?');
    expect(JSON.stringify(seen[0]?.messages)).toContain('# Hello');
  });

  it('caches pages for 15 minutes', async () => {
    let now = 1_000_000;
    const tool = webFetchTool({ now: () => now });
    hits.set('/plain', 0);
    await tool.execute({ url: `${base}/plain`, prompt: 'p' }, toolContext('/'));
    now += 14 * 60_000;
    const again = await tool.execute({ url: `${base}/plain`, prompt: 'p' }, toolContext('/'));
    expect(again.data?.cached).toBe(true);
    expect(hits.get('/plain')).toBe(1);
    now += 2 * 60_000;
    await tool.execute({ url: `${base}/plain`, prompt: 'p' }, toolContext('/'));
    expect(hits.get('/plain')).toBe(2);
  });

  it('follows redirects, re-checking each hop', async () => {
    const checked: string[] = [];
    const tool = webFetchTool({ checkUrl: (url) => (checked.push(url.pathname), true) });
    const result = await tool.execute({ url: `${base}/hop1`, prompt: 'p' }, toolContext('/'));
    expect(text(result)).toContain('just text');
    expect(result.data?.finalUrl).toBe(`${base}/plain`);
    expect(checked).toEqual(['/hop1', '/hop2', '/plain']);
  });

  it('refuses a redirect to a URL the check denies, without fetching it', async () => {
    hits.set('/forbidden', 0);
    const tool = webFetchTool({ checkUrl: (url) => (url.pathname === '/forbidden' ? 'blocked by policy' : true) });
    const result = await tool.execute({ url: `${base}/to-forbidden`, prompt: 'p' }, toolContext('/'));
    expect(result).toMatchObject({ success: false, errorCode: 'url_denied' });
    expect(text(result)).toContain('blocked by policy');
    expect(hits.get('/forbidden')).toBe(0);
  });

  it('upgrades http to https except on this machine', async () => {
    const requested: string[] = [];
    const fakeFetch = (async (url: URL | string) => {
      requested.push(String(url));
      return new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } });
    }) as typeof fetch;
    const resolve = async () => ['93.184.215.14'];
    const tool = webFetchTool({ fetch: fakeFetch, resolveHost: resolve });
    const result = await tool.execute({ url: 'http://docs.example.test:80/a?b=1', prompt: 'p' }, toolContext('/'));
    expect(result.success).toBe(true);
    expect(requested).toEqual(['https://docs.example.test/a?b=1']);
    expect(result.data?.finalUrl).toBe('https://docs.example.test/a?b=1');
    for (const local of ['http://localhost:3000/', 'http://127.0.0.2/', 'http://[::1]:8080/', 'http://app.localhost/']) {
      await tool.execute({ url: local, prompt: 'p' }, toolContext('/'));
      expect(requested.at(-1)).toBe(local);
    }
    const plain = webFetchTool({ fetch: fakeFetch, resolveHost: resolve, upgradeToHttps: false });
    await plain.execute({ url: 'http://docs.example.test/x', prompt: 'p' }, toolContext('/'));
    expect(requested.at(-1)).toBe('http://docs.example.test/x');
  });

  it('refuses link-local addresses by default, on every hop and after resolving names', async () => {
    const resolveHost = async (host: string) => (host === 'metadata.internal.test' ? ['fe80::1', '169.254.169.254'] : ['127.0.0.1']);
    // 'follow' so the cross-host hops below are fetched here and meet the address check.
    const tool = webFetchTool({ resolveHost, crossHostRedirects: 'follow' });
    const direct = await tool.execute({ url: 'http://169.254.169.254/latest/meta-data/', prompt: 'p' }, toolContext('/'));
    expect(direct).toMatchObject({ success: false, errorCode: 'url_denied' });
    expect(text(direct)).toContain('link-local');
    const mapped = await tool.execute({ url: 'http://[::ffff:169.254.169.254]/', prompt: 'p' }, toolContext('/'));
    expect(mapped.errorCode).toBe('url_denied');
    const hop = await tool.execute({ url: `${base}/to-metadata`, prompt: 'p' }, toolContext('/'));
    expect(hop.errorCode).toBe('url_denied');
    const named = await tool.execute({ url: `${base}/to-internal-name`, prompt: 'p' }, toolContext('/'));
    expect(named.errorCode).toBe('url_denied');
    expect(text(named)).toContain('metadata.internal.test resolves to');
    // Loopback is allowed by default (local dev servers) …
    expect((await tool.execute({ url: `${base}/plain`, prompt: 'p' }, toolContext('/'))).success).toBe(true);
    // … and refused under 'private', before any request is made.
    hits.set('/plain', 0);
    const strict = await webFetchTool({ blockAddresses: 'private', resolveHost }).execute({ url: `${base}/plain`, prompt: 'p' }, toolContext('/'));
    expect(strict.errorCode).toBe('url_denied');
    expect(text(strict)).toContain("blockAddresses: 'private'");
    expect(hits.get('/plain')).toBe(0);
    const open = webFetchTool({ blockAddresses: 'none', upgradeToHttps: false, fetch: (async () => new Response('meta', { headers: { 'content-type': 'text/plain' } })) as typeof fetch });
    expect((await open.execute({ url: 'http://169.254.169.254/', prompt: 'p' }, toolContext('/'))).success).toBe(true);
  });

  it("reports cross-host hops by default without contacting the other host, so the address check is never reached", async () => {
    const resolved: string[] = [];
    const resolveHost = async (host: string) => (resolved.push(host), host === 'metadata.internal.test' ? ['169.254.169.254'] : ['127.0.0.1']);
    const tool = webFetchTool({ resolveHost });
    const hop = await tool.execute({ url: `${base}/to-metadata`, prompt: 'p' }, toolContext('/'));
    expect(hop).toMatchObject({ success: true, data: { redirect: { url: 'http://169.254.169.254/latest/meta-data/', status: 302 } } });
    expect(text(hop)).toContain('Redirect URL: http://169.254.169.254/latest/meta-data/');
    const named = await tool.execute({ url: `${base}/to-internal-name`, prompt: 'p' }, toolContext('/'));
    expect(named.data?.redirect?.url).toBe('http://metadata.internal.test/');
    expect(resolved).not.toContain('metadata.internal.test');
    // The model's follow-up call is checked like any other.
    const followUp = await tool.execute({ url: named.data!.redirect!.url, prompt: 'p' }, toolContext('/'));
    expect(followUp.errorCode).toBe('url_denied');
  });

  it('limits redirects, size, time and content type', async () => {
    const loop = await webFetchTool({ maxRedirects: 3 }).execute({ url: `${base}/loop`, prompt: 'p' }, toolContext('/'));
    expect(text(loop)).toContain('Too many redirects');
    const big = await webFetchTool({ maxBytes: 1000 }).execute({ url: `${base}/big`, prompt: 'p' }, toolContext('/'));
    expect(big.errorCode).toBe('too_large');
    const slow = await webFetchTool({ timeoutMs: 100 }).execute({ url: `${base}/slow`, prompt: 'p' }, toolContext('/'));
    expect(text(slow)).toContain('timed out after 100 ms');
    const binary = await webFetchTool().execute({ url: `${base}/binary`, prompt: 'p' }, toolContext('/'));
    expect(text(binary)).toContain('not text');
    const missing = await webFetchTool().execute({ url: `${base}/nothing`, prompt: 'p' }, toolContext('/'));
    expect(text(missing)).toContain('HTTP 404');
    const scheme = await webFetchTool().execute({ url: 'file:///etc/passwd', prompt: 'p' }, toolContext('/'));
    expect(scheme.errorCode).toBe('url_denied');
  });
});

describe('WebSearch', () => {
  it('says clearly when no backend is configured', async () => {
    const result = await webSearchTool().execute({ query: 'tessera' }, toolContext('/'));
    expect(result).toMatchObject({ success: false, errorCode: 'unavailable' });
    expect(text(result)).toContain('not configured');
  });

  it('searches through Brave with the API key and applies allowed_domains', async () => {
    const tool = webSearchTool({ backend: new BraveSearchBackend({ apiKey: 'key-1', endpoint: `${base}/brave` }) });
    const all = await tool.execute({ query: 'tessera' }, toolContext('/'));
    expect(text(all)).toContain('1. About tessera\n   https://docs.example.com/a\n   first hit');
    const allowed = await tool.execute({ query: 'tessera', allowed_domains: ['example.com'] }, toolContext('/'));
    expect(allowed.data?.results.map((hit) => hit.url)).toEqual(['https://docs.example.com/a', 'https://www.example.com/']);
    const blocked = await tool.execute({ query: 'tessera', blocked_domains: ['example.com'] }, toolContext('/'));
    expect(blocked.data?.results.map((hit) => hit.url)).toEqual(['https://blog.other.org/b']);
    const both = await tool.execute({ query: 'tessera', allowed_domains: ['a.com'], blocked_domains: ['b.com'] }, toolContext('/'));
    expect(both.success).toBe(false);
  });

  it('reports backend failures', async () => {
    const tool = webSearchTool({ backend: new BraveSearchBackend({ apiKey: 'wrong', endpoint: `${base}/brave` }) });
    const result = await tool.execute({ query: 'tessera' }, toolContext('/'));
    expect(result.errorCode).toBe('search_failed');
    expect(text(result)).toContain('HTTP 401');
  });

  it('searches a SearXNG instance by URL', async () => {
    const tool = webSearchTool({ backend: new SearxngSearchBackend({ baseUrl: `${base}/searx` }) });
    const result = await tool.execute({ query: 'plugins' }, toolContext('/'));
    expect(result.data).toMatchObject({ backend: 'searxng', results: [{ title: 'Searx hit', url: 'https://searx.example.net/x', snippet: 'for plugins' }] });
  });

  it('matches domains and their subdomains only', () => {
    expect(hostMatches('https://a.b.example.com/x', 'example.com')).toBe(true);
    expect(hostMatches('https://notexample.com/', 'example.com')).toBe(false);
    expect(hostMatches('https://example.com/', 'https://www.example.com/')).toBe(true);
  });
});
