import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointUrl, HttpConnectionError, postForEventStream, resolveEndpoint, type ServerSentEvent } from './event-stream-http.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: (response: ServerResponse, body: string) => void): Promise<URL> {
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => handler(response, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
}

const post = (url: URL, signal = new AbortController().signal, responseTimeoutMs = 5_000) =>
  postForEventStream({ url, headers: { 'content-type': 'application/json' }, body: '{"a":1}', signal, responseTimeoutMs });

describe('endpointUrl', () => {
  it('joins the path to the base URL, keeping its prefix, and says what is wrong with one that is not http(s)', () => {
    expect(String(endpointUrl('https://api.example.com', 'v1/messages'))).toBe('https://api.example.com/v1/messages');
    expect(String(endpointUrl('http://gw.local/openai/v1/', '/chat/completions'))).toBe('http://gw.local/openai/v1/chat/completions');
    expect(endpointUrl('not a url', 'x')).toBe('The base URL "not a url" is not a URL');
    expect(endpointUrl('file:///tmp', 'x')).toBe('The base URL "file:///tmp" is not http: or https:');
  });

  it('resolveEndpoint gives the URL, or why not with the endpoint as it would read', () => {
    const good = resolveEndpoint('https://gw.example/anthropic/', 'v1/messages');
    expect(good).toEqual({ href: 'https://gw.example/anthropic/v1/messages', url: new URL('https://gw.example/anthropic/v1/messages') });
    expect(resolveEndpoint('localhost:8080/', '/chat/completions')).toEqual({
      href: 'localhost:8080/chat/completions',
      invalid: 'The base URL "localhost:8080/" is not http: or https:',
    });
  });
});

describe('postForEventStream', () => {
  it('sends the body and yields named and unnamed events, multi-line data joined, comments skipped', async () => {
    let received = '';
    const url = await serve((response, body) => {
      received = body;
      response.writeHead(200, { 'content-type': 'text/event-stream', 'x-id': 'abc' });
      response.end(': comment\n\nevent: one\ndata: a\ndata: b\n\ndata: {"plain":true}\n\nevent: unfinished\ndata: dropped');
    });
    const answer = await post(url);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('X-Id')).toBe('abc');
    const events: ServerSentEvent[] = [];
    for await (const event of answer.events()) events.push(event);
    expect(received).toBe('{"a":1}');
    expect(events).toEqual([
      { event: 'one', data: 'a\nb' },
      { event: undefined, data: '{"plain":true}' },
    ]);
  });

  it('gives an error answer as text, and fails with the phase for a silent server, a refused connection and a cut stream', async () => {
    const errorUrl = await serve((response) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end('{"error":"x"}');
    });
    const failed = await post(errorUrl);
    expect(failed.status).toBe(500);
    expect(await failed.text()).toBe('{"error":"x"}');

    const silentUrl = await serve(() => undefined);
    await expect(post(silentUrl, undefined, 50)).rejects.toMatchObject({ name: 'HttpConnectionError', phase: 'timeout' });

    const cutUrl = await serve((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const cut = await post(cutUrl);
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of cut.events()) seen.push(event.data);
    })().catch((thrown: unknown) => thrown);
    expect(seen).toEqual(['first']);
    expect(error).toBeInstanceOf(HttpConnectionError);
    expect(error).toMatchObject({ phase: 'stream' });

    const refused = new URL(silentUrl);
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await expect(post(refused)).rejects.toMatchObject({ phase: 'connect', cause: expect.objectContaining({ code: 'ECONNREFUSED' }) });
  });
});
