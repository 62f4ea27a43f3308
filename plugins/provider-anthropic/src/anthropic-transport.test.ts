import Anthropic from '@anthropic-ai/sdk';
import type { Message, ProviderRequest } from '@tessera/contracts';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import { AnthropicProviderError } from './anthropic-provider-error.js';
import { HttpConnectionError } from '@tessera/provider-kit';
import { AnthropicApiError, AnthropicHttpTransport } from './anthropic-transport.js';

/** A loopback server whose handler writes the raw bytes a test wants on the wire. */
async function rawServer(handler: (request: IncomingMessage, response: ServerResponse, body: string) => void): Promise<{ server: Server; baseURL: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      paths.push(request.url ?? '');
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { server, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const message = (text: string): string[] => [
  `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}}\n\n`,
  `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n`,
  `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}\n\n`,
  `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n`,
  `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n`,
  `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
];

function request(extra: Partial<ProviderRequest> = {}): ProviderRequest {
  const messages: Message[] = [{ role: 'user', content: 'hi' }];
  return { messages, tools: [], signal: new AbortController().signal, ...extra };
}

async function collect(transport: AnthropicHttpTransport, signal = new AbortController().signal): Promise<Array<{ type: string }>> {
  const opened = await transport.open({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true }, signal);
  const events: Array<{ type: string }> = [];
  for await (const event of opened.events) events.push(event);
  return events;
}

describe('AnthropicHttpTransport', () => {
  it('parses events split at any byte, CRLF line ends, comments, multi-line data and pings', async () => {
    const frames = message('héllo wörld').join('');
    // CRLF everywhere, a comment and a ping in the middle, a data field split over two lines.
    const wire = `: keep-alive\r\n\r\n${frames.replaceAll('\n', '\r\n')}`.replace(
      'event: content_block_stop',
      'event: ping\r\ndata: {"type":"ping"}\r\n\r\nevent: content_block_stop',
    ).replace('data: {"type":"message_stop"}', 'data: {"type":\r\ndata: "message_stop"}');
    const bytes = Buffer.from(wire);
    const { baseURL } = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_raw' });
      // One byte per write, so every boundary (inside a UTF-8 sequence, between CR and LF) is hit.
      let offset = 0;
      const next = (): void => {
        if (offset >= bytes.length) return void response.end();
        response.write(bytes.subarray(offset, offset + 7));
        offset += 7;
        setImmediate(next);
      };
      next();
    });
    const transport = new AnthropicHttpTransport({ apiKey: 'k', baseURL, responseTimeoutMs: 5_000 });
    const events = await collect(transport);
    expect(events.map((event) => event.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[2]).toMatchObject({ delta: { text: 'héllo wörld' } });
  });

  it('keeps a path prefix of the base URL and sends the key, version and custom headers', async () => {
    let seen: IncomingMessage | undefined;
    const { baseURL, paths } = await rawServer((incoming, response) => {
      seen = incoming;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(message('x').join(''));
    });
    const transport = new AnthropicHttpTransport({ apiKey: 'sk-1', baseURL: `${baseURL}/gateway/`, headers: { 'Anthropic-Beta': 'b1' }, responseTimeoutMs: 5_000 });
    expect(transport.url).toBe(`${baseURL}/gateway/v1/messages`);
    await collect(transport);
    expect(paths).toEqual(['/gateway/v1/messages']);
    expect(seen?.headers).toMatchObject({ 'x-api-key': 'sk-1', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'b1', 'content-type': 'application/json' });
  });

  it('turns an error status into AnthropicApiError with type, message, request id and headers, also for a body that is not JSON', async () => {
    let body = '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}';
    const { baseURL } = await rawServer((_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'request-id': 'req_9', 'retry-after': '4' });
      response.end(body);
    });
    const transport = new AnthropicHttpTransport({ apiKey: 'k', baseURL, responseTimeoutMs: 5_000 });
    const error = await collect(transport).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(AnthropicApiError);
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_error', apiMessage: 'slow down', requestId: 'req_9' });
    expect((error as AnthropicApiError).headers?.get('Retry-After')).toBe('4');
    body = '<html>bad gateway</html>';
    expect(await collect(transport).catch((thrown: unknown) => thrown)).toMatchObject({ status: 429, type: undefined, apiMessage: '<html>bad gateway</html>' });
  });

  it('does not follow a redirect, and refuses a JSON answer to a streaming call, naming what to fix without retrying', async () => {
    let answer: 'redirect' | 'json' | 'json-error' = 'redirect';
    const { baseURL, paths } = await rawServer((_request, response) => {
      if (answer === 'redirect') {
        response.writeHead(307, { location: 'https://elsewhere.example/v1/messages' });
        response.end();
      } else if (answer === 'json') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"id":"msg_1","type":"message","content":[]}');
      } else {
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        response.end('{"type":"error","error":{"type":"overloaded_error","message":"busy"}}');
      }
    });
    const provider = new AnthropicProvider({ apiKey: 'k', baseURL, sleep: async () => undefined });
    const redirect = await provider.stream(request()).catch((thrown: unknown) => thrown);
    expect(redirect).toMatchObject({ code: 'invalid_request', status: 307, recoverable: false });
    expect((redirect as Error).message).toContain('redirect to https://elsewhere.example/v1/messages');
    expect(paths).toHaveLength(1);
    answer = 'json';
    const json = await provider.stream(request()).catch((thrown: unknown) => thrown);
    expect(json).toMatchObject({ code: 'invalid_request', status: 200 });
    expect((json as Error).message).toContain('JSON instead of an event stream');
    expect(paths).toHaveLength(2);
    // An API error sent as JSON with a 200 is still read as the API's error.
    answer = 'json-error';
    expect(await provider.stream(request()).catch((thrown: unknown) => thrown)).toMatchObject({ code: 'overloaded', details: { apiErrorType: 'overloaded_error' } });
  });

  it('reports a refused connection and a server that never answers as connection errors', async () => {
    const { server, baseURL } = await rawServer(() => undefined);
    const silent = new AnthropicHttpTransport({ apiKey: 'k', baseURL, responseTimeoutMs: 100 });
    expect(await collect(silent).catch((thrown: unknown) => thrown)).toMatchObject({ name: 'HttpConnectionError', phase: 'timeout' });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const refused = new AnthropicHttpTransport({ apiKey: 'k', baseURL, responseTimeoutMs: 5_000 });
    const error = await collect(refused).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(HttpConnectionError);
    expect(error).toMatchObject({ phase: 'connect', cause: expect.objectContaining({ code: 'ECONNREFUSED' }) });
  });

  it('ends quietly when the signal aborts mid-stream and closes the connection', async () => {
    let closed = false;
    const { baseURL, paths } = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // Two events in one write: the second is already buffered when the consumer aborts.
      response.write(message('a').slice(0, 2).join(''));
      response.on('close', () => (closed = true));
    });
    const controller = new AbortController();
    const transport = new AnthropicHttpTransport({ apiKey: 'k', baseURL, responseTimeoutMs: 5_000 });
    const opened = await transport.open({ model: 'm', max_tokens: 1, messages: [], stream: true }, controller.signal);
    const seen: string[] = [];
    for await (const event of opened.events) {
      seen.push(event.type);
      controller.abort();
    }
    expect(seen).toEqual(['message_start']);
    await expect.poll(() => closed).toBe(true);
    // A call whose signal already aborted sends nothing.
    const before = paths.length;
    await expect(transport.open({ model: 'm', max_tokens: 1, messages: [], stream: true }, controller.signal)).rejects.toBeInstanceOf(HttpConnectionError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(paths).toHaveLength(before);
  });

  it('names what is wrong with a base URL that is not one, at the first call, sending nothing', async () => {
    const provider = new AnthropicProvider({ apiKey: 'k', baseURL: 'not a url', maxRetries: 3 });
    const error = await provider.stream(request()).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(AnthropicProviderError);
    expect(error).toMatchObject({ code: 'invalid_request', details: { attempts: 1 } });
    expect((error as Error).message).toContain('"not a url" is not a URL');
  });
});

describe('AnthropicProvider base URL and SDK client', () => {
  let fake: FakeAnthropicServer | undefined;
  afterEach(() => fake?.close());

  /** Runs `body` with the given Anthropic variables set (undefined: unset), then restores them. */
  async function withEnv(vars: Record<string, string | undefined>, body: () => Promise<void>): Promise<void> {
    const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
    const apply = (values: Record<string, string | undefined>): void => {
      for (const [name, value] of Object.entries(values)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    };
    apply(vars);
    try {
      await body();
    } finally {
      apply(saved);
    }
  }

  it('sends ANTHROPIC_AUTH_TOKEN as a bearer token, as Claude Code does; with a key too, both headers', async () => {
    fake = new FakeAnthropicServer();
    await fake.listen();
    await withEnv({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: 'gw-token', ANTHROPIC_BASE_URL: fake.baseURL }, async () => {
      fake!.reply({ text: 'one' }, { text: 'two' });
      await new AnthropicProvider().stream(request());
      expect(fake!.requests[0]?.headers).toMatchObject({ authorization: 'Bearer gw-token' });
      expect(fake!.requests[0]?.headers['x-api-key']).toBeUndefined();
      process.env.ANTHROPIC_API_KEY = 'sk-env';
      await new AnthropicProvider().stream(request());
      expect(fake!.requests[1]?.headers).toMatchObject({ authorization: 'Bearer gw-token', 'x-api-key': 'sk-env' });
    });
  });

  it('credentials given in code are the only ones sent: an apiKey option does not pick up ANTHROPIC_AUTH_TOKEN', async () => {
    fake = new FakeAnthropicServer();
    await fake.listen();
    await withEnv({ ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_AUTH_TOKEN: 'gw-env' }, async () => {
      fake!.reply({ text: 'a' }, { text: 'b' });
      await new AnthropicProvider({ apiKey: 'sk-option', baseURL: fake!.baseURL }).stream(request());
      expect(fake!.requests[0]?.headers).toMatchObject({ 'x-api-key': 'sk-option' });
      expect(fake!.requests[0]?.headers.authorization).toBeUndefined();
      await new AnthropicProvider({ authToken: 'gw-option', baseURL: fake!.baseURL }).stream(request());
      expect(fake!.requests[1]?.headers).toMatchObject({ authorization: 'Bearer gw-option' });
      expect(fake!.requests[1]?.headers['x-api-key']).toBeUndefined();
    });
  });

  it('a rejected bearer token is reported as ANTHROPIC_AUTH_TOKEN; no credential at all names both variables', async () => {
    fake = new FakeAnthropicServer();
    await fake.listen();
    await withEnv({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: 'gw-bad', ANTHROPIC_BASE_URL: fake.baseURL }, async () => {
      fake!.fail(401, { message: 'invalid bearer token' });
      const error = await new AnthropicProvider({ maxRetries: 0 }).stream(request()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AnthropicProviderError);
      expect((error as AnthropicProviderError).code).toBe('auth');
      expect((error as Error).message).toContain('ANTHROPIC_AUTH_TOKEN');
      expect((error as Error).message).not.toContain('gw-bad');
      delete process.env.ANTHROPIC_AUTH_TOKEN;
      const missing = await new AnthropicProvider().stream(request()).catch((caught: unknown) => caught);
      expect((missing as Error).message).toMatch(/ANTHROPIC_API_KEY.*ANTHROPIC_AUTH_TOKEN/);
    });
  });

  it('reads ANTHROPIC_BASE_URL when no baseURL is given', async () => {
    fake = new FakeAnthropicServer();
    await fake.listen();
    const saved = process.env.ANTHROPIC_BASE_URL;
    process.env.ANTHROPIC_BASE_URL = fake.baseURL;
    try {
      fake.reply({ text: 'from env' });
      const provider = new AnthropicProvider({ apiKey: 'k' });
      expect(provider.url).toBe(`${fake.baseURL}/v1/messages`);
      expect((await provider.stream(request())).content).toEqual([{ type: 'text', text: 'from env' }]);
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_BASE_URL;
      else process.env.ANTHROPIC_BASE_URL = saved;
    }
  });

  it('sends through a given SDK client, with the same results and the same typed errors', async () => {
    fake = new FakeAnthropicServer();
    await fake.listen();
    const client = new Anthropic({ apiKey: 'sk-sdk', baseURL: fake.baseURL, maxRetries: 0 });
    const provider = new AnthropicProvider({ client, sleep: async () => undefined });
    expect(provider.client).toBe(client);
    fake.reply({ text: ['via ', 'sdk'] });
    const reply = await provider.stream(request());
    expect(reply.content).toEqual([{ type: 'text', text: 'via sdk' }]);
    expect(reply.metadata).toMatchObject({ requestId: 'req_fake_1' });
    fake.fail(401, { message: 'invalid x-api-key' });
    const auth = await provider.stream(request()).catch((thrown: unknown) => thrown);
    expect(auth).toMatchObject({ code: 'auth', status: 401 });
    fake.reply({ text: ['partial'], errorEvent: 'overloaded_error' });
    expect(await provider.stream(request()).catch((thrown: unknown) => thrown)).toMatchObject({ code: 'overloaded' });
    fake.reply({ text: ['Hello', ' there'], fault: { type: 'cut', afterEvents: 4 } });
    expect(await provider.stream(request()).catch((thrown: unknown) => thrown)).toMatchObject({ code: 'network' });
  });
});
