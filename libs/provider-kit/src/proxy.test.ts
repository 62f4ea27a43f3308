import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TEST_TLS, TestProxy, TlsTerminator } from '@tessera/test-servers';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpConnectionError, postForEventStream } from './event-stream-http.js';
import { bypassesProxy, proxyFor, requestThroughProxy } from './proxy.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A loopback API that answers every POST with two events and records what reached it. */
async function api(): Promise<{ port: number; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server: Server = createServer((request, response) => {
    seen.push(request);
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('event: a\ndata: 1\n\nevent: b\ndata: 2\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, seen };
}

async function proxyWith(options: ConstructorParameters<typeof TestProxy>[0]): Promise<TestProxy> {
  const proxy = await new TestProxy(options).listen();
  closers.push(() => proxy.close());
  return proxy;
}

/** Runs `body` with these variables (undefined: unset) and every other proxy variable unset. */
async function withEnv<T>(vars: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const names = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy', ...Object.keys(vars)];
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  for (const name of names) delete process.env[name];
  for (const [name, value] of Object.entries(vars)) if (value !== undefined) process.env[name] = value;
  try {
    return await body();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

async function post(url: string): Promise<string[]> {
  const response = await postForEventStream({ url: new URL(url), headers: { 'content-type': 'application/json' }, body: '{}', signal: new AbortController().signal, responseTimeoutMs: 5_000 });
  const events: string[] = [];
  for await (const event of response.events()) events.push(`${event.event}=${event.data}`);
  return events;
}

describe('NO_PROXY', () => {
  const target = (url: string): URL => new URL(url);
  it.each([
    ['*', 'https://api.anthropic.com', true],
    ['api.anthropic.com', 'https://api.anthropic.com', true],
    ['anthropic.com', 'https://api.anthropic.com', true],
    ['.anthropic.com', 'https://api.anthropic.com', true],
    ['*.anthropic.com', 'https://api.anthropic.com/v1', true],
    ['.anthropic.com', 'https://anthropic.com', true],
    ['thropic.com', 'https://api.anthropic.com', false],
    ['example.com, ANTHROPIC.COM', 'https://api.anthropic.com', true],
    ['localhost 127.0.0.1', 'http://127.0.0.1:8080', true],
    ['127.0.0.1:9000', 'http://127.0.0.1:8080', false],
    ['127.0.0.1:8080', 'http://127.0.0.1:8080', true],
    ['api.anthropic.com:443', 'https://api.anthropic.com', true],
    ['api.anthropic.com:80', 'https://api.anthropic.com', false],
    ['::1', 'http://[::1]:3000', true],
    ['[::1]:3000', 'http://[::1]:3000', true],
    ['27.0.0.1', 'http://127.0.0.1', false],
    ['', 'https://api.anthropic.com', false],
  ])('%j for %s: direct = %s', (noProxy, url, direct) => {
    expect(bypassesProxy(target(url), noProxy)).toBe(direct);
  });
});

describe('proxyFor', () => {
  const https = new URL('https://api.anthropic.com/v1/messages');
  const http = new URL('http://gateway.internal:4000/v1/messages');

  it('takes the HTTPS proxy for https: (falling back to the HTTP one) and the HTTP proxy for http:, lower case first', () => {
    expect(proxyFor(https, { HTTPS_PROXY: 'http://s:1', HTTP_PROXY: 'http://p:2' })?.href).toBe('http://s:1/');
    expect(proxyFor(https, { https_proxy: 'http://lower:1', HTTPS_PROXY: 'http://upper:2' })?.href).toBe('http://lower:1/');
    expect(proxyFor(https, { HTTP_PROXY: 'http://p:2' })?.href).toBe('http://p:2/');
    expect(proxyFor(http, { HTTPS_PROXY: 'http://s:1' })).toBeUndefined();
    expect(proxyFor(http, { http_proxy: 'proxy.corp:3128' })?.href).toBe('http://proxy.corp:3128/');
    expect(proxyFor(https, {})).toBeUndefined();
    expect(proxyFor(https, { HTTPS_PROXY: 'http://s:1', NO_PROXY: '.anthropic.com' })).toBeUndefined();
    expect(proxyFor(https, { HTTPS_PROXY: 'http://s:1', no_proxy: 'other.example', NO_PROXY: '*' })?.href).toBe('http://s:1/');
  });

  it('names the variable whose value is not a usable proxy URL', () => {
    expect(() => proxyFor(https, { HTTPS_PROXY: 'http://[bad' })).toThrow(/^HTTPS_PROXY is not a URL/);
    expect(() => proxyFor(https, { https_proxy: 'socks5://127.0.0.1:1080' })).toThrow(/https_proxy names a socks5: proxy; only http: and https: proxies/);
    expect(() => proxyFor(https, { HTTPS_PROXY: 'http://[bad' })).toThrow(HttpConnectionError);
  });
});

describe('postForEventStream through a proxy', () => {
  it('sends an http: call to HTTP_PROXY in absolute form, with Basic credentials from its URL', async () => {
    const { port, seen } = await api();
    const proxy = await proxyWith({ routes: { 'api.example.test:8080': port }, credentials: 'me:p@ss word' });
    const events = await withEnv({ HTTP_PROXY: `${proxy.url.replace('http://', 'http://me:p%40ss%20word@')}` }, () => post('http://api.example.test:8080/v1/messages'));
    expect(events).toEqual(['a=1', 'b=2']);
    expect(proxy.requests).toEqual([{ method: 'POST', target: 'http://api.example.test:8080/v1/messages', proxyAuthorization: `Basic ${Buffer.from('me:p@ss word').toString('base64')}` }]);
    expect(seen[0]?.headers.host).toBe('api.example.test:8080');
    expect(seen[0]?.headers['proxy-authorization']).toBeUndefined();
  });

  it('goes direct to a host NO_PROXY names; the proxy sees nothing', async () => {
    const { port, seen } = await api();
    const proxy = await proxyWith({ routes: {} });
    const events = await withEnv({ HTTP_PROXY: proxy.url, NO_PROXY: 'localhost,127.0.0.1' }, () => post(`http://127.0.0.1:${port}/v1/messages`));
    expect(events).toEqual(['a=1', 'b=2']);
    expect(proxy.requests).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('tunnels an https: call with CONNECT and checks the certificate against the target name', async () => {
    const { port, seen } = await api();
    const tls = await new TlsTerminator(port).listen();
    closers.push(() => tls.close());
    const proxy = await proxyWith({ routes: { 'api.example.test:443': tls.port, 'wrong.example.test:443': tls.port } });
    const target = new URL('https://api.example.test/v1/messages');
    const ca = readFileSync(TEST_TLS.ca);
    const ask = async (url: URL): Promise<number> => {
      const request = await requestThroughProxy(url, new URL(proxy.url), { method: 'POST', ca, headers: { 'content-length': '2' } });
      return new Promise((resolve, reject) => {
        request.on('response', (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
        request.end('{}');
      });
    };
    expect(await ask(target)).toBe(200);
    expect(proxy.requests[0]).toMatchObject({ method: 'CONNECT', target: 'api.example.test:443' });
    expect(seen[0]?.headers.host).toBe('api.example.test');
    // The certificate is for api.example.test: the same tunnel to another name is refused.
    await expect(ask(new URL('https://wrong.example.test/v1/messages'))).rejects.toThrow(/altnames|certificate/i);
  });

  it('says which proxy refused the tunnel and why, without its credentials', async () => {
    const proxy = await proxyWith({ routes: { 'api.example.test:443': 1 }, credentials: 'right:secret' });
    const withWrong = proxy.url.replace('http://', 'http://right:wrong-secret@');
    const error = await withEnv({ HTTPS_PROXY: withWrong }, () => post('https://api.example.test/v1/messages')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HttpConnectionError);
    const cause = (error as Error & { cause?: Error }).cause;
    expect(cause?.message).toContain(`The proxy ${proxy.url} refused the tunnel to api.example.test:443: 407`);
    expect(cause?.message).toContain('http://user:password@host:port');
    expect(cause?.message).not.toContain('wrong-secret');
  });

  it('reports a proxy that cannot be reached as a connection error naming it', async () => {
    const error = await withEnv({ HTTPS_PROXY: 'http://127.0.0.1:9' }, () => post('https://api.example.test/v1/messages')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HttpConnectionError);
    expect((error as HttpConnectionError).phase).toBe('connect');
    expect((error as Error & { cause?: Error }).cause?.message).toMatch(/^Could not reach the proxy http:\/\/127\.0\.0\.1:9/);
  });
});
