import { z } from 'zod';

/** Request bodies: strict (an unknown field is refused, named), bounded. */
export const createSessionBody = z.strictObject({
  cwd: z.string().min(1).max(4096).optional(),
  name: z.string().min(1).max(200).optional(),
  model: z.string().min(1).max(200).optional(),
  permissionMode: z.string().min(1).max(40).optional().describe('default, acceptEdits or plan; bypassPermissions only when the server allows it'),
  /** A stored session's id: resume it (its owner only). */
  resume: z.string().min(1).max(128).optional(),
});

export const renameSessionBody = z.strictObject({ name: z.string().min(1).max(200) });
/** `POST /v1/sessions/:id/abort` takes no fields (an empty body or `{}`). */
export const abortBody = z.strictObject({});

export const promptBody = z.strictObject({ prompt: z.string().min(1).max(200_000) });

export const permissionAnswerBody = z.strictObject({
  decision: z.enum(['allow', 'allow_always', 'deny']),
  message: z.string().max(4000).optional(),
});

export const commandBody = z.strictObject({ name: z.string().min(1).max(200), args: z.string().max(20_000).optional() });

/**
 * What the AI SDK's `DefaultChatTransport` posts (`useChat`): the chat id, the UI messages and
 * the trigger, plus whatever `body` the app adds; the last user message's text parts are the prompt.
 */
export const chatBody = z.looseObject({
  id: z.string().max(200).optional(),
  trigger: z.string().max(100).optional(),
  messageId: z.string().max(200).optional(),
  messages: z
    .array(
      z.looseObject({
        id: z.string().max(200).optional(),
        role: z.enum(['user', 'assistant', 'system']),
        parts: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).max(10_000),
      }),
    )
    .min(1)
    .max(10_000),
}).describe("useChat's request; unlike the other bodies, unknown fields are accepted (the app's own `body` fields come along)");

/** Client → server WebSocket messages. */
export const wsMessage = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('subscribe'), sessionId: z.string().max(128) }),
  z.strictObject({ type: z.literal('unsubscribe'), sessionId: z.string().max(128) }),
  z.strictObject({ type: z.literal('prompt'), sessionId: z.string().max(128), prompt: z.string().min(1).max(200_000) }),
  z.strictObject({ type: z.literal('abort'), sessionId: z.string().max(128) }),
  z.strictObject({ type: z.literal('permission'), sessionId: z.string().max(128), requestId: z.string().max(128), decision: z.enum(['allow', 'allow_always', 'deny']), message: z.string().max(4000).optional() }),
  z.strictObject({ type: z.literal('command'), sessionId: z.string().max(128), name: z.string().min(1).max(200), args: z.string().max(20_000).optional() }),
]);

/** The error body every route answers with. */
export const errorBody = z.object({ error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }) });

export const sessionSummary = z.object({
  id: z.string(),
  name: z.string().optional(),
  cwd: z.string(),
  createdAt: z.string(),
  running: z.boolean(),
  messageCount: z.number(),
  permissionMode: z.string(),
  pendingPermissions: z.array(z.object({ requestId: z.string(), status: z.string(), toolName: z.string(), toolCallId: z.string(), input: z.unknown(), suggestedRule: z.string().optional() })),
});
