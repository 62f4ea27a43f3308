import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderRequest } from '@tessera/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyProvider, text, toolContext } from './test-support.js';
import { webFetchTool } from './web-fetch-tool.js';

let server: Server;
let port: number;
let base: string;
const hits = new Map<string, number>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/go') response.writeHead(302, { location: `http://localhost:${port}/secret` }).end();
    else if (path === '/secret') response.writeHead(200, { 'content-type': 'text/plain' }).end('secret content');
    else if (path === '/page') response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Hello</h1><p>page body</p>');
    else response.writeHead(404).end('missing');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

/** A fetch that answers from a table of URL → response factory and records every request. */
function tableFetch(table: Record<string, () => Response>, requested: string[]): typeof fetch {
  return (async (url: URL | string) => {
    requested.push(String(url));
    const answer = table[String(url)];
    return answer ? answer() : new Response('missing', { status: 404 });
  }) as typeof fetch;
}

const redirectTo = (location: string, status = 302) => () => new Response(null, { status, headers: { location } });
const plain = (body: string) => () => new Response(body, { status: 200, headers: { 'content-type': 'text/plain' } });
const publicAddress = async () => ['93.184.215.14'];

describe('WebFetch cross-host redirects', () => {
  it('reports a redirect to another host instead of following it, so permission rules judge a new call', async () => {
    hits.set('/secret', 0);
    const checked: string[] = [];
    // The setup of the bug: 127.0.0.1 allowed, localhost denied — but the rules never see the hop.
    const tool = webFetchTool({ checkUrl: (url) => (checked.push(url.toString()), true) });
    const result = await tool.execute({ url: `${base}/go`, prompt: 'What is the secret?' }, toolContext('/'));

    expect(result.success).toBe(true);
    const output = text(result);
    expect(output).not.toContain('secret content');
    expect(output).toContain(`Original URL: ${base}/go`);
    expect(output).toContain(`Redirect URL: http://localhost:${port}/secret`);
    expect(output).toContain('Status: 302 Found');
    expect(output).toContain('make a new WebFetch request');
    expect(output).toContain('"What is the secret?"');
    expect(result.data).toMatchObject({ url: `${base}/go`, status: 302, answeredByModel: false, redirect: { url: `http://localhost:${port}/secret`, status: 302 } });
    expect(hits.get('/secret')).toBe(0);
    expect(checked).toEqual([`${base}/go`]);
  });

  it('never contacts or resolves the other host in report mode, even one the address policy would refuse', async () => {
    const requested: string[] = [];
    const resolved: string[] = [];
    const tool = webFetchTool({
      fetch: tableFetch({ 'https://start.example.test/a': redirectTo('http://metadata.internal.test/latest/', 301) }, requested),
      resolveHost: async (host) => (resolved.push(host), host === 'metadata.internal.test' ? ['169.254.169.254'] : ['93.184.215.14']),
    });
    const result = await tool.execute({ url: 'https://start.example.test/a', prompt: 'p' }, toolContext('/'));
    expect(result.success).toBe(true);
    expect(result.data?.redirect).toEqual({ url: 'http://metadata.internal.test/latest/', status: 301 });
    expect(text(result)).toContain('Status: 301');
    expect(requested).toEqual(['https://start.example.test/a']);
    expect(resolved).toEqual(['start.example.test']);
  });

  it('does not cache a redirect report as a page', async () => {
    hits.set('/go', 0);
    const tool = webFetchTool();
    await tool.execute({ url: `${base}/go`, prompt: 'p' }, toolContext('/'));
    const again = await tool.execute({ url: `${base}/go`, prompt: 'p' }, toolContext('/'));
    expect(again.data).toMatchObject({ cached: false, redirect: { status: 302 } });
    expect(hits.get('/go')).toBe(2);
  });

  it('follows same-host redirects that change case, scheme or port, checking every hop', async () => {
    const requested: string[] = [];
    const checked: string[] = [];
    const tool = webFetchTool({
      resolveHost: publicAddress,
      checkUrl: (url) => (checked.push(url.toString()), true),
      fetch: tableFetch(
        {
          'https://docs.example.test/a': redirectTo('https://DOCS.Example.test:8443/b', 301),
          'https://docs.example.test:8443/b': redirectTo('http://docs.example.test/c'),
          'https://docs.example.test/c': plain('the page'),
        },
        requested,
      ),
    });
    const result = await tool.execute({ url: 'http://Docs.example.test/a', prompt: 'p' }, toolContext('/'));
    expect(text(result)).toContain('the page');
    expect(result.data?.redirect).toBeUndefined();
    expect(result.data?.finalUrl).toBe('https://docs.example.test/c');
    const hops = ['https://docs.example.test/a', 'https://docs.example.test:8443/b', 'https://docs.example.test/c'];
    expect(requested).toEqual(hops);
    expect(checked).toEqual(hops);
  });

  it("reports a cross-host hop that comes after same-host ones, naming the URL first asked for", async () => {
    const tool = webFetchTool({
      resolveHost: publicAddress,
      fetch: tableFetch({ 'https://a.example.test/1': redirectTo('/2'), 'https://a.example.test/2': redirectTo('https://b.example.test/3', 307) }, []),
    });
    const result = await tool.execute({ url: 'https://a.example.test/1', prompt: 'p' }, toolContext('/'));
    expect(text(result)).toContain('Original URL: https://a.example.test/1');
    expect(result.data).toMatchObject({ url: 'https://a.example.test/1', finalUrl: 'https://a.example.test/2', redirect: { url: 'https://b.example.test/3', status: 307 } });
  });

  it("follows cross-host redirects under 'follow', each hop still going through checkUrl", async () => {
    const table = { 'https://a.example.test/1': redirectTo('https://b.example.test/2'), 'https://b.example.test/2': plain('other host') };
    const options = { resolveHost: publicAddress, crossHostRedirects: 'follow' as const, fetch: tableFetch(table, []) };
    const allowed = await webFetchTool(options).execute({ url: 'https://a.example.test/1', prompt: 'p' }, toolContext('/'));
    expect(text(allowed)).toContain('other host');
    const denied = await webFetchTool({ ...options, checkUrl: (url) => url.hostname !== 'b.example.test' || 'b is denied' }).execute(
      { url: 'https://a.example.test/1', prompt: 'p' },
      toolContext('/'),
    );
    expect(denied).toMatchObject({ success: false, errorCode: 'url_denied' });
    expect(text(denied)).toContain('b is denied');
  });
});

describe('WebFetch summary provider', () => {
  it("returns the Markdown without calling the session's provider when no model is configured", async () => {
    const seen: ProviderRequest[] = [];
    const result = await webFetchTool().execute({ url: `${base}/page`, prompt: 'summarise' }, toolContext('/', { provider: replyProvider('summary', seen) }));
    expect(text(result)).toContain('# Hello');
    expect(text(result)).toContain('Prompt: summarise');
    expect(result.data?.answeredByModel).toBe(false);
    expect(seen).toHaveLength(0);
  });

  it("asks the session's provider with the configured model", async () => {
    const seen: ProviderRequest[] = [];
    const result = await webFetchTool({ model: 'small-fast' }).execute(
      { url: `${base}/page`, prompt: 'What does it say?' },
      toolContext('/', { provider: replyProvider('It says hello.', seen) }),
    );
    expect(text(result)).toBe('It says hello.');
    expect(result.data?.answeredByModel).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.model).toBe('small-fast');
    expect(JSON.stringify(seen[0]?.messages)).toContain('page body');
  });

  it("prefers a provider given in the options, even without a model, over the session's", async () => {
    const given: ProviderRequest[] = [];
    const session: ProviderRequest[] = [];
    const tool = webFetchTool({ provider: () => replyProvider('from the option', given) });
    const result = await tool.execute({ url: `${base}/page`, prompt: 'p' }, toolContext('/', { provider: replyProvider('from the session', session) }));
    expect(text(result)).toBe('from the option');
    expect(given).toHaveLength(1);
    expect(given[0]).not.toHaveProperty('model');
    expect(session).toHaveLength(0);
  });
});
