import { z } from 'zod';
import { abortBody, chatBody, commandBody, createSessionBody, errorBody, permissionAnswerBody, promptBody, renameSessionBody, sessionSummary } from './schemas.js';

const schema = (type: z.ZodType): Record<string, unknown> => z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
const json = (type: z.ZodType) => ({ 'application/json': { schema: schema(type) } });
const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [String(code), { description: 'Error', content: json(errorBody) }]));
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
        post: { summary: 'Create a session (or resume a stored one with `resume`; then `cwd` and `model` are refused)', requestBody: { content: json(createSessionBody) }, responses: { '201': { description: 'Created', content: json(sessionSummary) }, ...errors(400, 401, 403, 404, 429) } },
        get: { summary: "List this token's sessions", responses: { '200': { description: 'Sessions', content: json(z.object({ sessions: z.array(sessionSummary) })) }, ...errors(401) } },
      },
      '/v1/sessions/{id}': {
        parameters: id,
        get: { summary: 'A session', responses: { '200': { description: 'Session', content: json(sessionSummary) }, ...errors(400, 401, 404) } },
        patch: { summary: 'Rename', requestBody: { content: json(renameSessionBody) }, responses: { '200': { description: 'Renamed', content: json(sessionSummary) }, ...errors(400, 401, 404) } },
        delete: {
          summary: 'End the session and delete its stored transcript; with ?keep=true only end it here (it stays stored and can be resumed)',
          parameters: [{ name: 'keep', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] } }],
          responses: { '204': { description: 'Deleted' }, ...errors(400, 401, 404) },
        },
      },
      '/v1/sessions/{id}/messages': { parameters: id, post: { summary: 'Run a turn', requestBody: { content: json(promptBody) }, responses: { '200': stream, ...errors(400, 401, 404, 409, 429) } } },
      '/v1/sessions/{id}/chat': { parameters: id, post: { summary: "Run a turn from the AI SDK's chat request (useChat / DefaultChatTransport)", requestBody: { content: json(chatBody) }, responses: { '200': stream, ...errors(400, 401, 404, 409, 429) } } },
      '/v1/sessions/{id}/stream': { parameters: id, get: { summary: 'Re-attach to the running turn', responses: { '200': stream, '204': { description: 'No turn is running' }, ...errors(401, 404) } } },
      '/v1/sessions/{id}/chat/{chatId}/stream': {
        parameters: [...id, { name: 'chatId', in: 'path', required: true, schema: { type: 'string' }, description: 'The session id again: where DefaultChatTransport reconnects (useChat resume)' }],
        get: { summary: 'Re-attach to the running turn (the AI SDK chat transport’s reconnect URL)', responses: { '200': stream, '204': { description: 'No turn is running' }, ...errors(400, 401, 404) } },
      },
      '/v1/sessions/{id}/abort': { parameters: id, post: { summary: 'Abort the running turn', requestBody: { required: false, content: json(abortBody) }, responses: { '200': { description: 'Whether a turn was running', content: json(z.object({ aborted: z.boolean() })) }, ...errors(400, 401, 404, 503) } } },
      '/v1/sessions/{id}/permissions/{requestId}': {
        parameters: [...id, { name: 'requestId', in: 'path', required: true, schema: { type: 'string' } }],
        post: { summary: 'Answer a permission request', requestBody: { content: json(permissionAnswerBody) }, responses: { '200': { description: 'Answered' }, ...errors(400, 401, 404, 503) } },
      },
      '/v1/sessions/{id}/commands': { parameters: id, post: { summary: 'Run a slash command (host-wide ones such as /plugin are refused with command_not_allowed)', requestBody: { content: json(commandBody) }, responses: { '200': { description: 'The command result' }, ...errors(400, 401, 403, 404) } } },
      '/v1/sessions/{id}/history': { parameters: id, get: { summary: 'The timeline (chat and event entries)', responses: { '200': { description: 'History' }, ...errors(401, 404) } } },
      '/v1/ws': { get: { summary: 'WebSocket: the same parts, plus prompt / abort / permission / command messages (token in Authorization or ?token=)', responses: { '101': { description: 'Switching protocols' }, ...errors(401) } } },
    },
  };
  return cached;
}
