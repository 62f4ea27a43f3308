import { z } from 'zod';

// zod schemas for contract data that crosses a process or file boundary (session records,
// transports). Kept out of the package index so importing the contracts costs no zod load;
// import them from `@tessera/contracts/schemas`.

export const providerUsageSchema = z.looseObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative().optional(),
  cacheWriteTokens: z.number().int().nonnegative().optional(),
  raw: z.record(z.string(), z.unknown()).optional(),
});

export const textBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
export const imageBlockSchema = z.object({ type: z.literal('image'), data: z.string(), mediaType: z.string() });
export const thinkingBlockSchema = z.object({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
  redacted: z.boolean().optional(),
});
export const toolUseBlockSchema = z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.unknown() });
export const toolResultBlockSchema = z.object({
  type: z.literal('tool_result'),
  toolUseId: z.string().min(1),
  toolName: z.string(),
  content: z.union([z.string(), z.array(z.union([textBlockSchema, imageBlockSchema]))]),
  isError: z.boolean(),
});

const metadata = z.record(z.string(), z.unknown()).optional();

export const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string(), metadata }),
  z.object({ role: z.literal('user'), content: z.union([z.string(), z.array(z.union([textBlockSchema, imageBlockSchema]))]), metadata }),
  z.object({
    role: z.literal('assistant'),
    content: z.array(z.discriminatedUnion('type', [textBlockSchema, thinkingBlockSchema, toolUseBlockSchema])),
    state: z.enum(['complete', 'interrupted']),
    stopReason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'refusal', 'aborted', 'error']).optional(),
    usage: providerUsageSchema.optional(),
    provider: z.string().optional(),
    model: z.string().optional(),
    metadata,
  }),
  z.object({ role: z.literal('tool'), content: z.array(toolResultBlockSchema), metadata }),
]);

export const historyEntrySchema = z.object({
  id: z.string().min(1),
  timestamp: z.string(),
  category: z.enum(['chat', 'event']),
  type: z.string(),
  data: z.unknown(),
});

export const toolSchemaSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});

/** ISessionRecord; unknown extension fields are kept. */
export const sessionRecordSchema = z.looseObject({
  id: z.string().min(1),
  cwd: z.string(),
  name: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messages: z.array(messageSchema),
  history: z.array(historyEntrySchema),
  systemPrompt: z.string().optional(),
  toolSchemas: z.array(toolSchemaSchema).optional(),
});
