import { z } from 'zod';

/** The format version this package writes. Older files are migrated on load; newer ones are refused. */
export const CURRENT_SESSION_VERSION = 3;

// Schemas are loose objects: pi and oh-my-pi add fields over time, and a reader must keep
// what it does not understand so a rewrite never drops data.

export const sessionHeaderSchema = z.looseObject({
  type: z.literal('session'),
  /** Absent in v1 files. */
  version: z.number().int().positive().optional(),
  id: z.string().min(1),
  timestamp: z.string(),
  cwd: z.string(),
  title: z.string().optional(),
  /** Opaque lineage marker: a session id or a session file path. */
  parentSession: z.string().optional(),
});
export type SessionHeader = z.infer<typeof sessionHeaderSchema>;

const entryBase = {
  id: z.string().min(1),
  parentId: z.string().min(1).nullable(),
  timestamp: z.string(),
};

/** A message as the agent stores it: at least a `role`; the rest belongs to the message model. */
export const agentMessageSchema = z.looseObject({ role: z.string().min(1) });
export type AgentMessage = z.infer<typeof agentMessageSchema>;

export const messageEntrySchema = z.looseObject({
  type: z.literal('message'),
  ...entryBase,
  message: agentMessageSchema,
});

export const thinkingLevelChangeEntrySchema = z.looseObject({
  type: z.literal('thinking_level_change'),
  ...entryBase,
  thinkingLevel: z.string(),
});

/**
 * oh-my-pi writes `model: "provider/id"` (+ `role`); pi writes `provider` + `modelId`.
 * Tessera writes both so either reader understands the entry.
 */
export const modelChangeEntrySchema = z
  .looseObject({
    type: z.literal('model_change'),
    ...entryBase,
    model: z.string().optional(),
    role: z.string().optional(),
    provider: z.string().optional(),
    modelId: z.string().optional(),
  })
  .refine((entry) => entry.model !== undefined || (entry.provider !== undefined && entry.modelId !== undefined), {
    message: 'model_change needs "model" ("provider/id") or both "provider" and "modelId"',
  });

export const compactionEntrySchema = z.looseObject({
  type: z.literal('compaction'),
  ...entryBase,
  summary: z.string(),
  shortSummary: z.string().optional(),
  firstKeptEntryId: z.string().optional(),
  tokensBefore: z.number(),
  details: z.unknown().optional(),
  preserveData: z.unknown().optional(),
  fromExtension: z.boolean().optional(),
});

export const branchSummaryEntrySchema = z.looseObject({
  type: z.literal('branch_summary'),
  ...entryBase,
  /** The branch point, or the literal `"root"`. */
  fromId: z.string(),
  summary: z.string(),
  details: z.unknown().optional(),
  fromExtension: z.boolean().optional(),
});

export const customEntrySchema = z.looseObject({
  type: z.literal('custom'),
  ...entryBase,
  customType: z.string(),
  data: z.unknown().optional(),
});

export const customMessageEntrySchema = z.looseObject({
  type: z.literal('custom_message'),
  ...entryBase,
  customType: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
  display: z.boolean(),
  details: z.unknown().optional(),
});

export const labelEntrySchema = z.looseObject({
  type: z.literal('label'),
  ...entryBase,
  targetId: z.string().min(1),
  /** Absent clears the label of `targetId`. */
  label: z.string().optional(),
});

export const ttsrInjectionEntrySchema = z.looseObject({
  type: z.literal('ttsr_injection'),
  ...entryBase,
  injectedRules: z.array(z.string()),
});

export const sessionInitEntrySchema = z.looseObject({
  type: z.literal('session_init'),
  ...entryBase,
  systemPrompt: z.string().optional(),
  task: z.string().optional(),
  tools: z.array(z.string()).optional(),
  outputSchema: z.unknown().optional(),
});

export const modeChangeEntrySchema = z.looseObject({
  type: z.literal('mode_change'),
  ...entryBase,
  mode: z.string(),
  data: z.unknown().optional(),
});

export const sessionEntrySchema = z.union([
  messageEntrySchema,
  thinkingLevelChangeEntrySchema,
  modelChangeEntrySchema,
  compactionEntrySchema,
  branchSummaryEntrySchema,
  customEntrySchema,
  customMessageEntrySchema,
  labelEntrySchema,
  ttsrInjectionEntrySchema,
  sessionInitEntrySchema,
  modeChangeEntrySchema,
]);

export type MessageEntry = z.infer<typeof messageEntrySchema>;
export type ThinkingLevelChangeEntry = z.infer<typeof thinkingLevelChangeEntrySchema>;
export type ModelChangeEntry = z.infer<typeof modelChangeEntrySchema>;
export type CompactionEntry = z.infer<typeof compactionEntrySchema>;
export type BranchSummaryEntry = z.infer<typeof branchSummaryEntrySchema>;
export type CustomEntry = z.infer<typeof customEntrySchema>;
export type CustomMessageEntry = z.infer<typeof customMessageEntrySchema>;
export type LabelEntry = z.infer<typeof labelEntrySchema>;
export type TtsrInjectionEntry = z.infer<typeof ttsrInjectionEntrySchema>;
export type SessionInitEntry = z.infer<typeof sessionInitEntrySchema>;
export type ModeChangeEntry = z.infer<typeof modeChangeEntrySchema>;
export type SessionEntry = z.infer<typeof sessionEntrySchema>;
export type SessionEntryType = SessionEntry['type'];

/** Every line of a session file: the header first, then entries. */
export type FileEntry = SessionHeader | SessionEntry;

export function isSessionHeader(value: unknown): value is SessionHeader {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'session' &&
    typeof (value as { id?: unknown }).id === 'string'
  );
}

/** `provider/modelId` of a model_change entry in either dialect, or undefined. */
export function modelChangeRef(entry: ModelChangeEntry): string | undefined {
  if (typeof entry.model === 'string') return entry.model;
  if (typeof entry.provider === 'string' && typeof entry.modelId === 'string') return `${entry.provider}/${entry.modelId}`;
  return undefined;
}
