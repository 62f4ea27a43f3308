import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A loopback HTTP server the tests start and stop, with the request headers it saw. */
export interface LoopbackServer {
  url: string;
  seenHeaders: Array<Record<string, string | string[] | undefined>>;
  close(): Promise<void>;
}

function mcpServer(name: string): McpServer {
  const server = new McpServer({ name, version: '1.0.0' });
  server.registerTool('greet', { description: 'Greets someone.', inputSchema: { who: z.string() } }, async ({ who }, extra) => ({
    content: [{ type: 'text', text: `hello ${who}${extra.authInfo ? ` (token ${extra.authInfo.token})` : ''}` }],
  }));
  server.registerPrompt('intro', { description: 'An introduction.' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: `Introduce ${name}.` } }] }));
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse, base: string) => Promise<void>, seenHeaders: LoopbackServer['seenHeaders']): Promise<LoopbackServer> {
  let base = '';
  const http: Server = createServer((req, res) => {
    seenHeaders.push({ ...req.headers, ':path': req.url });
    handler(req, res, base).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    seenHeaders,
    close: () => new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    }),
  };
}

/** Stateful Streamable HTTP at `/mcp`; `authorize` (when given) checks the bearer token first. */
function streamableHandler(name: string, check?: (req: IncomingMessage, res: ServerResponse, base: string) => boolean) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return async (req: IncomingMessage, res: ServerResponse, base: string): Promise<void> => {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    if (check && !check(req, res, base)) return;
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sessionId) => void transports.set(sessionId, transport!) });
      await mcpServer(name).connect(transport);
    }
    await transport.handleRequest(req as IncomingMessage & { auth?: never }, res, body);
  };
}

export function startStreamableServer(name = 'remote'): Promise<LoopbackServer> {
  return listen(streamableHandler(name), []);
}

/** The older HTTP+SSE transport only: GET `/mcp` opens the stream, POST `/mcp` is refused with 405. */
export function startSseOnlyServer(name = 'legacy'): Promise<LoopbackServer> {
  const transports = new Map<string, SSEServerTransport>();
  return listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/mcp' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      await mcpServer(name).connect(transport);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handlePostMessage(req, res, await readBody(req));
      return;
    }
    res.writeHead(405, { Allow: 'GET' }).end('Method Not Allowed');
  }, []);
}

/**
 * An MCP server behind OAuth, with its own authorization server on the same loopback port:
 * protected-resource and authorization-server metadata, dynamic registration, an authorize
 * endpoint that redirects at once with a code, and a token endpoint that checks PKCE (S256).
 */
export async function startOAuthServer(): Promise<LoopbackServer & { issued: string[] }> {
  const issued: string[] = [];
  const codes = new Map<string, { challenge: string; redirectUri: string }>();
  const json = (res: ServerResponse, status: number, value: unknown): void => {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
  };
  const mcp = streamableHandler('secured', (req, res, base) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token && issued.includes(token)) {
      (req as IncomingMessage & { auth?: unknown }).auth = { token, clientId: 'test', scopes: [] };
      return true;
    }
    res.writeHead(401, { 'WWW-Authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` }).end();
    return false;
  });
  const seen: LoopbackServer['seenHeaders'] = [];
  const server = await listen(async (req, res, base) => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base] });
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        registration_endpoint: `${base}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (url.pathname === '/register' && req.method === 'POST') {
      const body = (await readBody(req)) as Record<string, unknown>;
      return json(res, 201, { ...body, client_id: `client-${randomUUID()}`, client_id_issued_at: Math.floor(Date.now() / 1000) });
    }
    if (url.pathname === '/authorize') {
      const challenge = url.searchParams.get('code_challenge') ?? '';
      const redirectUri = url.searchParams.get('redirect_uri') ?? '';
      const code = randomUUID();
      codes.set(code, { challenge, redirectUri });
      const target = new URL(redirectUri);
      target.searchParams.set('code', code);
      const state = url.searchParams.get('state');
      if (state) target.searchParams.set('state', state);
      res.writeHead(302, { Location: target.toString() }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const pending = codes.get(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      if (!pending || createHash('sha256').update(verifier).digest('base64url') !== pending.challenge) return json(res, 400, { error: 'invalid_grant' });
      codes.delete(form.get('code')!);
      const token = `token-${randomUUID()}`;
      issued.push(token);
      return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600, refresh_token: `refresh-${randomUUID()}` });
    }
    return mcp(req, res, base);
  }, seen);
  return Object.assign(server, { issued });
}
