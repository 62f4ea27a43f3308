import OpenAI from 'openai';
import type { Message, ProviderRequest } from '@tessera/contracts';
import { FakeOpenAIServer } from '@tessera/test-servers';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIProvider } from './openai-provider.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A loopback server whose handler writes the raw answer a test wants. */
async function rawServer(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ baseURL: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      seen.push(request);
      handler(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

function request(extra: Partial<ProviderRequest> = {}): ProviderRequest {
  const messages: Message[] = [{ role: 'user', content: 'hi' }];
  return { messages, tools: [], signal: new AbortController().signal, ...extra };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe('OpenAIHttpTransport (through OpenAIProvider)', () => {
  it('reads data-only events up to [DONE], reads the rest of the body, and sends the key and the organisation', async () => {
    const saved = { org: process.env.OPENAI_ORG_ID, project: process.env.OPENAI_PROJECT_ID };
    process.env.OPENAI_ORG_ID = 'org-1';
    process.env.OPENAI_PROJECT_ID = 'proj-1';
    try {
      let closedEarly = false;
      const { baseURL, seen } = await rawServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_o1' });
        response.on('close', () => (closedEarly = !response.writableFinished));
        // CRLF, a comment, and something after [DONE] that must not be read as a chunk.
        response.end(
          `: hello\r\n\r\n${chunk({ role: 'assistant', content: 'Hel' }).replaceAll('\n', '\r\n')}${chunk({ content: 'lo' })}${chunk({}, 'stop')}data: [DONE]\n\ndata: {"not":"a chunk"\n\n`,
        );
      });
      const provider = new OpenAIProvider({ apiKey: 'sk-1', baseURL, model: 'm', headers: { 'X-Extra': 'yes' } });
      expect(provider.url).toBe(`${baseURL}/chat/completions`);
      const reply = await provider.stream(request());
      expect(reply.content).toEqual([{ type: 'text', text: 'Hello' }]);
      expect(reply.metadata).toMatchObject({ requestId: 'req_o1' });
      expect(seen[0]!.url).toBe('/v1/chat/completions');
      expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer sk-1', 'openai-organization': 'org-1', 'openai-project': 'proj-1', 'x-extra': 'yes' });
      expect(closedEarly).toBe(false);
    } finally {
      for (const [name, value] of [['OPENAI_ORG_ID', saved.org], ['OPENAI_PROJECT_ID', saved.project]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('reads an error body that is a bare string (Ollama), a redirect and a JSON answer, without retrying the last two', async () => {
    let answer: 'string' | 'redirect' | 'json' = 'string';
    const { baseURL, seen } = await rawServer((_request, response) => {
      if (answer === 'string') {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end('{"error":"model \\"nope\\" not found, try pulling it first"}');
      } else if (answer === 'redirect') {
        response.writeHead(308, { location: 'https://elsewhere.example/v1/chat/completions' });
        response.end();
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"id":"x","object":"chat.completion","choices":[]}');
      }
    });
    const provider = new OpenAIProvider({ apiKey: 'k', baseURL, model: 'nope', name: 'ollama', sleep: async () => undefined });
    const missing = await provider.stream(request()).catch((thrown: unknown) => thrown);
    expect(missing).toMatchObject({ code: 'invalid_request', status: 404, provider: 'ollama' });
    expect((missing as Error).message).toContain('model not found: nope');
    answer = 'redirect';
    const redirect = await provider.stream(request()).catch((thrown: unknown) => thrown);
    expect(redirect).toMatchObject({ code: 'invalid_request', status: 308 });
    expect((redirect as Error).message).toContain('redirect to https://elsewhere.example');
    answer = 'json';
    const json = await provider.stream(request()).catch((thrown: unknown) => thrown);
    expect(json).toMatchObject({ code: 'invalid_request', status: 200 });
    expect((json as Error).message).toContain('JSON instead of an event stream');
    expect(seen).toHaveLength(3);
  });

  it('reads OPENAI_BASE_URL, and names a base URL that is not one at the first call', async () => {
    const fake = new FakeOpenAIServer();
    await fake.listen();
    const saved = process.env.OPENAI_BASE_URL;
    process.env.OPENAI_BASE_URL = fake.baseURL;
    try {
      fake.reply({ text: 'from env' });
      const provider = new OpenAIProvider({ apiKey: 'k', model: 'm' });
      expect((await provider.stream(request())).content).toEqual([{ type: 'text', text: 'from env' }]);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved;
      fake.close();
    }
    const bad = await new OpenAIProvider({ apiKey: 'k', model: 'm', baseURL: 'localhost:1234' }).stream(request()).catch((thrown: unknown) => thrown);
    expect(bad).toMatchObject({ code: 'invalid_request', details: { attempts: 1 } });
    expect((bad as Error).message).toContain('"localhost:1234" is not http: or https:');
  });

  it('sends through a given SDK client, with the same results and the same typed errors', async () => {
    const fake = new FakeOpenAIServer();
    await fake.listen();
    try {
      const client = new OpenAI({ apiKey: 'sk-sdk', baseURL: fake.baseURL, maxRetries: 0 });
      const provider = new OpenAIProvider({ client, model: 'm', sleep: async () => undefined });
      expect(provider.client).toBe(client);
      fake.reply({ text: ['via ', 'sdk'] });
      expect((await provider.stream(request())).content).toEqual([{ type: 'text', text: 'via sdk' }]);
      fake.fail(401, { message: 'bad key' });
      expect(await provider.stream(request()).catch((thrown: unknown) => thrown)).toMatchObject({ code: 'auth', status: 401 });
      fake.reply({ text: ['partial'], errorChunk: { message: 'boom' } });
      expect(await provider.stream(request()).catch((thrown: unknown) => thrown)).toMatchObject({ code: 'server' });
      fake.reply({ text: ['Hello', ' there', ' friend'], fault: { type: 'cut', afterEvents: 3 } });
      expect(await provider.stream(request()).catch((thrown: unknown) => thrown)).toMatchObject({ code: 'network' });
    } finally {
      fake.close();
    }
  });
});
