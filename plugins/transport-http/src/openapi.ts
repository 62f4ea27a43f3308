import { z } from 'zod';
import { abortBody, chatBody, commandBody, createSessionBody, errorBody, permissionAnswerBody, promptBody, renameSessionBody, sessionSummary } from './schemas.js';

const schema = (type: z.ZodType): Record<string, unknown> => z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
const json = (type: z.ZodType) => ({ 'application/json': { schema: schema(type) } });
const ERROR_CODES: Record<number, string> = {
  400: 'invalid_json, invalid_request (with field), invalid_session_id, invalid_cwd',
  401: 'unauthorized',
  403: 'cwd_not_allowed, bypass_not_allowed, command_not_allowed',
  404: 'session_not_found, permission_request_not_found, unknown_command',
  409: 'turn_in_progress',
  413: 'body_too_large',
  429: 'rate_limited, too_many_sessions, too_many_turns',
  500: 'internal_error',
  503: 'shutting_down, store_unavailable (retry)',
};
/** Answers every /v1 route can give: no or a wrong token, the token's request budget, a server fault, a closing server or a failing shared store. */
const ALWAYS = [401, 429, 500, 503];
const errors = (...codes: number[]) =>
  Object.fromEntries([...new Set([...codes, ...ALWAYS])].sort().map((code) => [String(code), { description: `Error: ${ERROR_CODES[code]}`, content: json(errorBody) }]));
/** A route with a JSON body also answers 400 (bad JSON or fields) and 413 (too large). */
const bodyErrors = (...codes: number[]) => errors(400, 413, ...codes);
const commandResult = z.looseObject({ success: z.boolean(), message: z.string(), data: z.unknown().optional(), effects: z.array(z.looseObject({ type: z.string() })).optional() });
const historyBody = z.object({ history: z.array(z.looseObject({ id: z.string(), timestamp: z.string(), category: z.string(), type: z.string() })) });
const askAnswered = z.looseObject({ requestId: z.string(), toolName: z.string(), status: z.string() });
const stream = { description: 'The turn as the AI SDK UI message stream (SSE, header x-vercel-ai-ui-message-stream: v1), ending with data: [DONE]', content: { 'text/event-stream': { schema: { type: 'string' } } } };
const id = [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }];

let cached: Record<string, unknown> | undefined;

/** The REST API as OpenAPI 3.1, generated from the same zod schemas that check the bodies. */
export function openApiDocument(): Record<string, unknown> {
  cached ??= {
    openapi: '3.1.0',
    info: { title: 'Tessera server', version: '1', description: 'Sessions, turns streamed as the AI SDK UI message stream, permission answers, commands. Every /v1 route needs Authorization: Bearer <token>; a token sees only its own sessions.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths: {
      '/v1/sessions': {
        post: { summary: 'Create a session (or resume a stored one with `resume`; then `cwd` and `model` are refused)', requestBody: { content: json(createSessionBody) }, responses: { '201': { description: 'Created', content: json(sessionSummary) }, ...bodyErrors(403, 404) } },
        get: { summary: "List this token's sessions", responses: { '200': { description: 'Sessions', content: json(z.object({ sessions: z.array(sessionSummary) })) }, ...errors() } },
      },
      '/v1/sessions/{id}': {
        parameters: id,
        get: { summary: 'A session', responses: { '200': { description: 'Session', content: json(sessionSummary) }, ...errors(400, 404) } },
        patch: { summary: 'Rename', requestBody: { content: json(renameSessionBody) }, responses: { '200': { description: 'Renamed', content: json(sessionSummary) }, ...bodyErrors(404) } },
        delete: {
          summary: 'End the session and delete its stored transcript; with ?keep=true only end it here (it stays stored and can be resumed). A session the host attached is only taken away from the clients.',
          parameters: [{ name: 'keep', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] } }],
          responses: { '204': { description: 'Deleted' }, ...errors(400, 404) },
        },
      },
      '/v1/sessions/{id}/messages': { parameters: id, post: { summary: 'Run a turn', requestBody: { content: json(promptBody) }, responses: { '200': stream, ...bodyErrors(404, 409) } } },
      '/v1/sessions/{id}/chat': { parameters: id, post: { summary: "Run a turn from the AI SDK's chat request (useChat / DefaultChatTransport)", requestBody: { content: json(chatBody) }, responses: { '200': stream, ...bodyErrors(404, 409) } } },
      '/v1/sessions/{id}/stream': { parameters: id, get: { summary: 'Re-attach to the running turn', responses: { '200': stream, '204': { description: 'No turn is running' }, ...errors(400, 404) } } },
      '/v1/sessions/{id}/chat/{chatId}/stream': {
        parameters: [...id, { name: 'chatId', in: 'path', required: true, schema: { type: 'string' }, description: 'The session id again: where DefaultChatTransport reconnects (useChat resume)' }],
        get: { summary: 'Re-attach to the running turn (the AI SDK chat transport’s reconnect URL)', responses: { '200': stream, '204': { description: 'No turn is running' }, ...errors(400, 404) } },
      },
      '/v1/sessions/{id}/abort': { parameters: id, post: { summary: 'Abort the running turn', requestBody: { required: false, content: json(abortBody) }, responses: { '200': { description: 'Whether a turn was running', content: json(z.object({ aborted: z.boolean() })) }, ...bodyErrors(404) } } },
      '/v1/sessions/{id}/permissions/{requestId}': {
        parameters: [...id, { name: 'requestId', in: 'path', required: true, schema: { type: 'string' } }],
        post: { summary: 'Answer a permission request', requestBody: { content: json(permissionAnswerBody) }, responses: { '200': { description: 'The ask, answered', content: json(askAnswered) }, ...bodyErrors(404) } },
      },
      '/v1/sessions/{id}/commands': { parameters: id, post: { summary: 'Run a slash command (host-wide ones such as /plugin are refused with command_not_allowed)', requestBody: { content: json(commandBody) }, responses: { '200': { description: 'The command result', content: json(commandResult) }, ...bodyErrors(403, 404) } } },
      '/v1/sessions/{id}/history': { parameters: id, get: { summary: 'The timeline (chat and event entries)', responses: { '200': { description: 'History', content: json(historyBody) }, ...errors(400, 404) } } },
      '/v1/ws': { get: { summary: 'WebSocket: the same parts, plus prompt / abort / permission / command messages (token in Authorization or ?token=)', responses: { '101': { description: 'Switching protocols' }, ...errors() } } },
      '/mcp': { post: { summary: 'MCP Streamable HTTP (when the server mounts an MCP handler): tools prompt, abort and command_<name> for this token’s sessions', responses: { '200': { description: 'MCP response (JSON or SSE)' }, ...errors(400, 404) } } },
      '/health': { get: { summary: 'Liveness; no token needed', security: [], responses: { '200': { description: 'Serving', content: json(z.object({ ok: z.literal(true) })) } } } },
      '/openapi.json': { get: { summary: 'This document; no token needed', security: [], responses: { '200': { description: 'OpenAPI 3.1' } } } },
    },
  };
  return cached;
}
