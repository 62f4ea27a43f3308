import type { IncomingMessage, ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { UpgradeWebSocket } from 'hono/ws';
import type { z } from 'zod';
import { describeError } from '@tessera/contracts';
import { RateLimiter, type TokenAuth } from './auth.js';
import { openApiDocument } from './openapi.js';
import { abortBody, chatBody, commandBody, createSessionBody, permissionAnswerBody, promptBody, renameSessionBody, wsMessage } from './schemas.js';
import { HubError, type SessionHub, type Turn } from './session-hub.js';

export interface ServerAppOptions {
  hub: SessionHub;
  auth: TokenAuth;
  /** Requests per minute per token (0: no limit). Default 600. */
  rateLimitPerMinute?: number;
  /** Allowed browser origins; none by default (CORS off). */
  corsOrigins?: readonly string[];
  /** Largest request body. Default 1 MiB. */
  maxBodyBytes?: number;
  /** SSE keep-alive comment interval. Default 15 s. */
  keepAliveMs?: number;
  /**
   * A client that disconnects mid-turn aborts it when it was the turn's last viewer (default);
   * `false` keeps the turn running so the client can re-attach with `GET …/stream`.
   */
  abortOnDisconnect?: boolean;
  /** Parts waiting for one slow client beyond this many bytes end its stream (the turn goes on). Default 4 MiB. */
  maxBufferedBytes?: number;
  /** Hono's WebSocket upgrader (`upgradeWebSocket` from `@hono/node-server`); without it there is no `/v1/ws`. */
  upgradeWebSocket?: UpgradeWebSocket<unknown>;
  /** An MCP Streamable HTTP handler mounted at `/mcp` (behind the same tokens). */
  mcpHandler?: (request: Request, owner: string) => Promise<Response>;
}

type Variables = { owner: string };

/** What `@hono/node-server` passes as `c.env`: the Node request and response. */
interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

function nodeBindings(c: Context): NodeBindings | undefined {
  const env = c.env as NodeBindings | undefined;
  return env && typeof env.incoming?.on === 'function' && typeof env.outgoing?.writeHead === 'function' ? env : undefined;
}

function bodyTooLarge(maxBytes: number): HubError {
  return new HubError('body_too_large', 413, `The request body is larger than ${maxBytes} bytes.`);
}

/**
 * The request body as text, at most `maxBytes`. On Node it is read straight from the request
 * stream (no web stream in between, which costs more than the rest of a small request's
 * handling); elsewhere through Hono, after the `bodyLimit` middleware has bounded it.
 */
async function readBodyText(c: Context, maxBytes: number): Promise<string> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > maxBytes) throw bodyTooLarge(maxBytes);
  const incoming = nodeBindings(c)?.incoming;
  if (!incoming || incoming.readableEnded) return c.req.text();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw bodyTooLarge(maxBytes);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}

/** Where a turn's SSE text goes: Hono's stream, or the Node response itself. */
interface SseSink {
  /**
   * Resolves once the text is accepted (after `drain` when the socket's buffer is full).
   * `last`: nothing follows, so the response may end with this text (one write, not two).
   */
  write(text: string, last?: boolean): Promise<void>;
  onAbort(listener: () => void): void;
}

/** The Node response as a sink: writes go straight to the socket, `close` before the end is a disconnect. */
function nodeSink(outgoing: ServerResponse): SseSink {
  // The client may have gone while the turn was being started.
  let closed = outgoing.destroyed;
  // Every write that found the buffer full waits for the same drain (a keep-alive may be written
  // while the turn's own write waits: each must be resumed, or the turn's stream stalls for good).
  const waiting: Array<() => void> = [];
  const resume = (): void => {
    for (const wake of waiting.splice(0)) wake();
  };
  const aborts: Array<() => void> = [];
  outgoing.on('close', () => {
    closed = true;
    resume();
    if (!outgoing.writableFinished) for (const listener of aborts) listener();
  });
  outgoing.on('drain', resume);
  // A write racing a reset socket is reported by `close`; an `error` event must not crash the server.
  outgoing.on('error', () => undefined);
  return {
    write(text, last) {
      if (last && !closed && !outgoing.destroyed) {
        // The end of the stream goes out with the last parts (the chunked terminator included).
        outgoing.end(text);
        return Promise.resolve();
      }
      if (closed || outgoing.destroyed || outgoing.write(text)) return Promise.resolve();
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    onAbort(listener) {
      if (closed) queueMicrotask(listener);
      else aborts.push(listener);
    },
  };
}

/** The AI SDK UI message stream's response headers. */
export const UI_MESSAGE_STREAM_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

function errorResponse(c: Context, error: unknown): Response {
  if (error instanceof HubError) return c.json({ error: { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) } }, error.status);
  return c.json({ error: { code: 'internal_error', message: `The server failed: ${describeError(error)}` } }, 500);
}

/** A body checked against its schema; the first problem is reported with its field. */
async function parseBodyWithin<T extends z.ZodType>(c: Context, schema: T, maxBytes: number): Promise<z.infer<T>> {
  let raw: unknown;
  const text = await readBodyText(c, maxBytes);
  try {
    raw = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new HubError('invalid_json', 400, 'The request body is not valid JSON.');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const unknown = issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys?.[0] : undefined;
    const field = unknown ?? (issue.path.map(String).join('.') || undefined);
    const message = unknown !== undefined ? `Unknown field "${unknown}".` : `${field ? `${field}: ` : ''}${issue.message}`;
    throw new HubError('invalid_request', 400, message, field);
  }
  return parsed.data;
}

/**
 * The HTTP API: sessions (create, list, get, rename, delete, resume), turns streamed as the AI
 * SDK UI message stream over SSE, abort, permission answers, commands, history, WebSocket, the
 * OpenAPI document. Every route but `/openapi.json` and `/health` needs a bearer token, and a
 * token reaches only its own sessions.
 */
export function createServerApp(options: ServerAppOptions): Hono<{ Variables: Variables }> {
  const { hub, auth } = options;
  const limiter = new RateLimiter(options.rateLimitPerMinute ?? 600);
  const app = new Hono<{ Variables: Variables }>();

  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: `No route ${c.req.method} ${new URL(c.req.url).pathname}.` } }, 404));
  if (options.corsOrigins && options.corsOrigins.length > 0) {
    app.use('*', cors({ origin: [...options.corsOrigins], allowHeaders: ['authorization', 'content-type'], allowMethods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] }));
  }
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const limitBody = bodyLimit({ maxSize: maxBodyBytes, onError: (c) => errorResponse(c, bodyTooLarge(maxBodyBytes)) });
  // On Node, JSON bodies are bounded while `parseBody` reads them; the MCP handler reads its own body through Hono.
  app.use('*', (c, next) => (nodeBindings(c) && !c.req.path.startsWith('/mcp') ? next() : limitBody(c, next)));
  const parseBody = <T extends z.ZodType>(c: Context, schema: T) => parseBodyWithin(c, schema, maxBodyBytes);

  // No counts: the route needs no token, and how many sessions every client holds is nobody's business.
  app.get('/health', (c) => c.json({ ok: true }));
  app.get('/openapi.json', (c) => c.json(openApiDocument()));

  const authenticate = async (c: Context<{ Variables: Variables }>, next: () => Promise<void>): Promise<Response | void> => {
    const owner = auth.owner(c.req.header('authorization')) ?? (isWebSocketUpgrade(c) ? auth.ownerOfToken(new URL(c.req.url).searchParams.get('token') ?? '') : undefined);
    if (!owner) return c.json({ error: { code: 'unauthorized', message: 'A valid bearer token is required (Authorization: Bearer <token>).' } }, 401, { 'www-authenticate': 'Bearer' });
    if (!limiter.take(owner)) return c.json({ error: { code: 'rate_limited', message: 'Too many requests for this token; slow down.' } }, 429, { 'retry-after': '60' });
    c.set('owner', owner);
    await next();
  };
  app.use('/v1/*', authenticate);
  app.use('/mcp', authenticate);
  app.use('/mcp/*', authenticate);

  app.post('/v1/sessions', async (c) => {
    const body = await parseBody(c, createSessionBody);
    const session = await hub.create(c.get('owner'), body);
    return c.json(session.summary(), 201);
  });
  app.get('/v1/sessions', async (c) => c.json({ sessions: await hub.sessionsOf(c.get('owner')) }));
  // `summary` is `get` in one process; with replicas it loads a session stored by another, refreshes a stale copy, and asks the replica running its turn for its pending asks.
  app.get('/v1/sessions/:id', async (c) => c.json(await hub.summary(c.get('owner'), c.req.param('id'))));
  app.patch('/v1/sessions/:id', async (c) => {
    const body = await parseBody(c, renameSessionBody);
    return c.json((await hub.rename(c.get('owner'), c.req.param('id'), body.name)).summary());
  });
  app.delete('/v1/sessions/:id', async (c) => {
    const keep = c.req.query('keep');
    if (keep !== undefined && keep !== 'true' && keep !== 'false') throw new HubError('invalid_request', 400, 'keep must be true or false.', 'keep');
    // `use`: the copy opened for the request is the one deleted, never let go in between (a 404).
    await hub.use(c.get('owner'), c.req.param('id'), (session) => hub.delete(c.get('owner'), session.id, { keep: keep === 'true' }));
    return c.body(null, 204);
  });
  app.get('/v1/sessions/:id/history', async (c) => {
    return c.json({ history: await hub.use(c.get('owner'), c.req.param('id'), (session) => session.interactive.getHistory()) });
  });
  app.post('/v1/sessions/:id/abort', async (c) => {
    // No fields: an empty body or `{}`; anything else is refused by name like any other body.
    await parseBody(c, abortBody);
    return c.json({ aborted: await hub.use(c.get('owner'), c.req.param('id'), (session) => hub.abort(c.get('owner'), session.id)) });
  });
  app.post('/v1/sessions/:id/permissions/:requestId', async (c) => {
    const body = await parseBody(c, permissionAnswerBody);
    return c.json(await hub.use(c.get('owner'), c.req.param('id'), (session) => hub.answer(c.get('owner'), session.id, c.req.param('requestId'), body.decision, body.message)));
  });
  app.post('/v1/sessions/:id/commands', async (c) => {
    const body = await parseBody(c, commandBody);
    const result = await hub.command(c.get('owner'), c.req.param('id'), body.name, body.args ?? '');
    return c.json({ success: result.success, message: result.message, ...(result.data ? { data: result.data } : {}), ...(result.effects ? { effects: result.effects } : {}) });
  });

  // A turn, streamed: `{ prompt }`, or the AI SDK's chat request (`useChat`).
  app.post('/v1/sessions/:id/messages', async (c) => {
    const body = await parseBody(c, promptBody);
    const turn = await hub.startTurn(c.get('owner'), c.req.param('id'), body.prompt);
    return streamTurn(c, turn, c.get('owner'), c.req.param('id'));
  });
  app.post('/v1/sessions/:id/chat', async (c) => {
    const body = await parseBody(c, chatBody);
    const last = [...body.messages].reverse().find((message) => message.role === 'user');
    const prompt = last?.parts.filter((part) => part.type === 'text' && typeof part.text === 'string').map((part) => part.text).join('\n') ?? '';
    if (prompt.trim() === '') throw new HubError('invalid_request', 400, 'The last user message has no text part.', 'messages');
    const turn = await hub.startTurn(c.get('owner'), c.req.param('id'), prompt);
    return streamTurn(c, turn, c.get('owner'), c.req.param('id'));
  });
  // Re-attach to the running turn (the AI SDK's resume: 204 when nothing runs); with replicas, also one running on another replica.
  const reattach = async (c: Context<{ Variables: Variables }>, sessionId: string) => {
    const turn = await hub.attach(c.get('owner'), sessionId);
    if (!turn || turn.done) return c.body(null, 204);
    return streamTurn(c, turn, c.get('owner'), sessionId);
  };
  app.get('/v1/sessions/:id/stream', (c) => reattach(c, c.req.param('id')));
  // Where the AI SDK's DefaultChatTransport reconnects (`${api}/${chatId}/stream`, api = …/chat): `useChat({ resume: true })` with the session id as chat id.
  app.get('/v1/sessions/:id/chat/:chatId/stream', (c) => {
    if (c.req.param('chatId') !== c.req.param('id')) throw new HubError('invalid_request', 400, 'The chat id must be the session id (useChat({ id: sessionId })).', 'chatId');
    return reattach(c, c.req.param('id'));
  });

  if (options.mcpHandler) {
    const handler = options.mcpHandler;
    app.all('/mcp', (c) => handler(c.req.raw, c.get('owner')));
  }

  if (options.upgradeWebSocket) mountWebSocket(app, hub, options.upgradeWebSocket, options.maxBufferedBytes ?? 4 * 1024 * 1024, limiter, options.abortOnDisconnect !== false);

  /** The turn's parts as SSE, replayed from its start; bounded per client; keep-alive comments. */
  function streamTurn(c: Context, turn: Turn, owner: string, sessionId: string): Response {
    const node = nodeBindings(c);
    if (node?.outgoing) {
      // Straight to the socket: a web stream per response costs more than the parts it carries.
      const headers: Record<string, string> = {};
      if (options.corsOrigins && options.corsOrigins.length > 0) {
        c.res.headers.forEach((value, name) => (headers[name] = value));
        headers.vary = 'Origin';
      }
      Object.assign(headers, UI_MESSAGE_STREAM_HEADERS);
      const outgoing = node.outgoing;
      // The headers go out now, with whatever parts the turn already has (one write, not two).
      outgoing.cork();
      outgoing.writeHead(200, headers);
      outgoing.flushHeaders();
      process.nextTick(() => outgoing.uncork());
      void pumpTurn(turn, nodeSink(outgoing), owner, sessionId)
        .catch(() => undefined)
        .finally(() => outgoing.end());
      return RESPONSE_ALREADY_SENT;
    }
    for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) c.header(name, value);
    return streamSSE(c, (stream: SSEStreamingApi) => pumpTurn(turn, { write: (text) => stream.write(text).then(() => undefined), onAbort: (listener) => stream.onAbort(listener) }, owner, sessionId));
  }

  async function pumpTurn(turn: Turn, sink: SseSink, owner: string, sessionId: string): Promise<void> {
    const maxBuffered = options.maxBufferedBytes ?? 4 * 1024 * 1024;
    // Parts as JSON text (serialised once), `undefined` for the end.
    let queue: Array<string | undefined> = [];
    let queuedBytes = 0;
    let wake: (() => void) | undefined;
    let overflow = false;
    turn.viewers += 1;
    const stop = turn.follow((chunk) => {
      if (overflow) return;
      const data = chunk === undefined ? undefined : JSON.stringify(chunk);
      queuedBytes += data?.length ?? 0;
      if (queuedBytes > maxBuffered) {
        // Past the bound nothing more is kept for this client: its stream ends with an error part.
        overflow = true;
        queue = [];
        queuedBytes = 0;
      } else queue.push(data);
      wake?.();
    });
    let disconnected = false;
    sink.onAbort(() => {
      disconnected = true;
      wake?.();
    });
    const keepAlive = setInterval(() => {
      void sink.write(': keep-alive\n\n').catch(() => undefined);
    }, options.keepAliveMs ?? 15_000);
    keepAlive.unref();
    try {
      for (;;) {
        if (disconnected) break;
        if (overflow) {
          await sink.write(`data: ${JSON.stringify({ type: 'error', errorText: 'This client read too slowly; its stream was ended. Re-attach with GET /v1/sessions/:id/stream.' })}\n\n`);
          break;
        }
        if (queue.length === 0) {
          if (turn.done) {
            await sink.write('data: [DONE]\n\n', true);
            break;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        // Everything queued goes out in one write: a burst of parts costs one syscall, not one each.
        let batch = '';
        let ended = false;
        const pending = queue;
        queue = [];
        for (let index = 0; index < pending.length; index++) {
          const data = pending[index];
          if (data === undefined) {
            ended = true;
            break;
          }
          queuedBytes -= data.length;
          batch += `data: ${data}\n\n`;
        }
        if (ended) batch += 'data: [DONE]\n\n';
        await sink.write(batch, ended);
        if (ended) break;
      }
    } finally {
      clearInterval(keepAlive);
      stop();
      turn.viewers -= 1;
      // A turn followed from another replica belongs to that replica's clients: leaving it aborts
      // nothing, but the last client here to leave stops this replica's following of it.
      if (turn.remote) hub.unfollowIfUnwatched(owner, sessionId, turn);
      // Aborted only when nobody else follows it: no other stream and no WebSocket watching the session.
      else if (disconnected && !turn.done && options.abortOnDisconnect !== false) hub.abortIfUnwatched(owner, sessionId);
    }
  }

  return app;
}

function isWebSocketUpgrade(c: Context): boolean {
  return c.req.header('upgrade')?.toLowerCase() === 'websocket';
}

/**
 * `/v1/ws`: the same parts as SSE, for every session the client subscribes to, plus requests
 * (prompt, abort, permission answers, commands) answered by `{ type: 'result', … }` frames.
 */
function mountWebSocket(app: Hono<{ Variables: Variables }>, hub: SessionHub, upgrade: UpgradeWebSocket<unknown>, maxBuffered: number, limiter: RateLimiter, abortOnDisconnect: boolean): void {
  app.get(
    '/v1/ws',
    upgrade((c) => {
      const owner = (c as Context<{ Variables: Variables }>).get('owner');
      const subscriptions = new Map<string, () => void>();
      /** Sessions whose turns this socket started (aborted when it goes and nobody else follows). */
      const started = new Set<string>();
      let closed = false;
      return {
        onMessage(event, ws) {
          const raw = ws.raw as { bufferedAmount?: number } | undefined;
          const send = (frame: unknown): void => {
            if ((raw?.bufferedAmount ?? 0) > maxBuffered) {
              ws.close(1008, 'client reads too slowly');
              return;
            }
            ws.send(JSON.stringify(frame));
          };
          // A frame that is not a valid message still counts against the token's budget, so
          // malformed frames are no way around the limit; once it is spent they get `rate_limited`.
          const refuse = (error: { code: string; message: string; field?: string }): void =>
            send({ type: 'error', error: limiter.take(owner) ? error : { code: 'rate_limited', message: 'Too many requests for this token; slow down.' } });
          let message: z.infer<typeof wsMessage>;
          try {
            const text = typeof event.data === 'string' ? event.data : Buffer.from(event.data as ArrayBuffer).toString('utf8');
            const parsed = wsMessage.safeParse(JSON.parse(text));
            if (!parsed.success) {
              const issue = parsed.error.issues[0]!;
              // The field named as a REST body error names it: an unknown key, else the path.
              const unknown = issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys?.[0] : undefined;
              const field = unknown ?? (issue.path.map(String).join('.') || undefined);
              refuse({ code: 'invalid_request', message: `${issue.path.join('.') || 'message'}: ${issue.message}`, ...(field === undefined ? {} : { field }) });
              return;
            }
            message = parsed.data;
          } catch {
            refuse({ code: 'invalid_json', message: 'A WebSocket message must be a JSON object.' });
            return;
          }
          const reply = (ok: boolean, payload: Record<string, unknown>): void => send({ type: 'result', request: message.type, sessionId: message.sessionId, ok, ...payload });
          // Each message is a request, counted against the token's budget as an HTTP request is.
          if (!limiter.take(owner)) {
            reply(false, { error: { code: 'rate_limited', message: 'Too many requests for this token; slow down.' } });
            return;
          }
          // One subscription per session and socket; in replica mode it also brings turns started on other replicas.
          const subscribe = async (sessionId: string): Promise<void> => {
            if (subscriptions.has(sessionId)) return;
            const stop = await hub.watch(owner, sessionId, (chunk) => send({ type: 'chunk', sessionId, chunk }));
            if (subscriptions.has(sessionId) || closed) stop();
            else subscriptions.set(sessionId, stop);
          };
          void (async () => {
            try {
              switch (message.type) {
                case 'subscribe': {
                  await subscribe(message.sessionId);
                  reply(true, {});
                  return;
                }
                case 'unsubscribe':
                  subscriptions.get(message.sessionId)?.();
                  subscriptions.delete(message.sessionId);
                  reply(true, {});
                  return;
                case 'prompt': {
                  await subscribe(message.sessionId);
                  const turn = await hub.startTurn(owner, message.sessionId, message.prompt);
                  started.add(message.sessionId);
                  reply(true, { turnId: turn.id });
                  return;
                }
                case 'abort':
                  reply(true, { aborted: await hub.use(owner, message.sessionId, (session) => hub.abort(owner, session.id)) });
                  return;
                case 'permission':
                  reply(true, { permission: await hub.use(owner, message.sessionId, (session) => hub.answer(owner, session.id, message.requestId, message.decision, message.message)) });
                  return;
                case 'command': {
                  const result = await hub.command(owner, message.sessionId, message.name, message.args ?? '');
                  // As `POST …/commands` answers: the message, and the command's data and effects when it has them.
                  reply(result.success, { message: result.message, ...(result.data === undefined ? {} : { data: result.data }), ...(result.effects === undefined ? {} : { effects: result.effects }) });
                  return;
                }
              }
            } catch (error) {
              reply(false, { error: error instanceof HubError ? { code: error.code, message: error.message, ...(error.field === undefined ? {} : { field: error.field }) } : { code: 'internal_error', message: describeError(error) } });
            }
          })();
        },
        onClose() {
          closed = true;
          for (const stop of subscriptions.values()) stop();
          subscriptions.clear();
          // A turn this socket started and nobody else follows any more is aborted, as for SSE.
          if (abortOnDisconnect) for (const sessionId of started) hub.abortIfUnwatched(owner, sessionId);
        },
      };
    }),
  );
}
