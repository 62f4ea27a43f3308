import { modelChangeRef, type AgentMessage, type SessionEntry } from './entries.js';

/** What a session sends to the model at a given leaf (spec: SessionContext). */
export interface SessionContext {
  messages: AgentMessage[];
  /** From the latest `thinking_level_change` on the path; `"off"` without one. */
  thinkingLevel: string;
  /** Role → `provider/modelId`: explicit `model_change`s, else `default` from the last assistant message. */
  models: Record<string, string>;
  /** `models.default` split into pi's shape, or null. */
  model: { provider: string; modelId: string } | null;
  /** Every rule injected on the path, first occurrence order. */
  injectedTtsrRules: string[];
  /** From the latest `mode_change`; `"none"` without one. */
  mode: string;
  modeData: unknown;
}

function timestampMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : ms;
}

export function createCustomMessage(
  customType: string,
  content: unknown,
  display: boolean,
  details: unknown,
  timestamp: string,
): AgentMessage {
  return { role: 'custom', customType, content, display, details, timestamp: timestampMs(timestamp) };
}

export function createBranchSummaryMessage(summary: string, fromId: string, timestamp: string): AgentMessage {
  return { role: 'branchSummary', summary, fromId, timestamp: timestampMs(timestamp) };
}

export function createCompactionSummaryMessage(summary: string, tokensBefore: number, timestamp: string): AgentMessage {
  return { role: 'compactionSummary', summary, tokensBefore, timestamp: timestampMs(timestamp) };
}

function emptyContext(): SessionContext {
  return { messages: [], thinkingLevel: 'off', models: {}, model: null, injectedTtsrRules: [], mode: 'none', modeData: undefined };
}

/**
 * The root→leaf path. Walks `parentId` links; a missing parent ends the walk, and so does an
 * id seen before (a cycle). Every step after the first lands on the entry `byId` holds for
 * that id, so in a cycle-free walk only the leaf's own id can repeat; more steps than `byId`
 * has entries therefore means a cycle, and only then is the walk redone with a visited set.
 * The path is filled back to front into an array of its exact length (no set, no reverse).
 */
export function getPath(leaf: SessionEntry, byId: ReadonlyMap<string, SessionEntry>): SessionEntry[] {
  const limit = byId.size + 1;
  let length = 0;
  let current: SessionEntry | undefined = leaf;
  while (current) {
    length += 1;
    if (length > limit) return getPathWithVisitedSet(leaf, byId);
    const parentId: string | null = current.parentId;
    current = parentId === null || parentId === leaf.id ? undefined : byId.get(parentId);
  }
  const path = new Array<SessionEntry>(length);
  current = leaf;
  for (let position = length - 1; position >= 0; position -= 1) {
    path[position] = current as SessionEntry;
    const parentId: string | null = (current as SessionEntry).parentId;
    current = parentId === null ? undefined : byId.get(parentId);
  }
  return path;
}

function getPathWithVisitedSet(leaf: SessionEntry, byId: ReadonlyMap<string, SessionEntry>): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let current: SessionEntry | undefined = leaf;
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    path.push(current);
    current = current.parentId === null ? undefined : byId.get(current.parentId);
  }
  return path.reverse();
}

/** The context message of one path entry, if it has one (compactions are handled by the caller). */
export function contextMessageOf(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case 'message':
      return entry.message;
    case 'custom_message':
      return createCustomMessage(entry.customType, entry.content, entry.display, entry.details, entry.timestamp);
    case 'branch_summary':
      return entry.summary ? createBranchSummaryMessage(entry.summary, entry.fromId, entry.timestamp) : undefined;
    default:
      return undefined;
  }
}

/** Which positions of a root→leaf path the context holds (see `buildSessionContext`). */
export interface ContextSpan {
  /** Position of the last compaction on the path, or -1. */
  compactionIndex: number;
  /** With a compaction: where the kept messages before it start (the compaction itself when none are kept). */
  keptFrom: number;
}

/** Where the context of `path` starts: everything, or the kept part around the last compaction. */
export function contextSpan(path: readonly SessionEntry[]): ContextSpan {
  let compactionIndex = -1;
  for (let position = path.length - 1; position >= 0; position -= 1) {
    if ((path[position] as SessionEntry).type === 'compaction') {
      compactionIndex = position;
      break;
    }
  }
  if (compactionIndex === -1) return { compactionIndex, keptFrom: 0 };
  const { firstKeptEntryId } = path[compactionIndex] as Extract<SessionEntry, { type: 'compaction' }>;
  let keptFrom = compactionIndex;
  for (let position = 0; position < compactionIndex; position += 1) {
    if ((path[position] as SessionEntry).id === firstKeptEntryId) {
      keptFrom = position;
      break;
    }
  }
  return { compactionIndex, keptFrom };
}

/**
 * What is sent to the model when the session is at `leafId`: `null` → empty context;
 * an id → that entry (the last entry when unknown); `undefined` → the last entry.
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId?: ReadonlyMap<string, SessionEntry>,
): SessionContext {
  if (leafId === null || entries.length === 0) return emptyContext();
  let index = byId;
  if (!index) {
    const built = new Map<string, SessionEntry>();
    for (const entry of entries) built.set(entry.id, entry);
    index = built;
  }
  const leaf = (leafId === undefined ? undefined : index.get(leafId)) ?? entries[entries.length - 1];
  if (!leaf) return emptyContext();
  const path = getPath(leaf, index);

  const context = emptyContext();
  const rules = new Set<string>();
  let assistantModel: string | undefined;
  let compactionIndex = -1;
  for (let position = 0; position < path.length; position += 1) {
    const entry = path[position] as SessionEntry;
    switch (entry.type) {
      case 'thinking_level_change':
        context.thinkingLevel = entry.thinkingLevel;
        break;
      case 'model_change': {
        const ref = modelChangeRef(entry);
        if (ref !== undefined) context.models[entry.role ?? 'default'] = ref;
        break;
      }
      case 'message': {
        const { provider, model } = entry.message as { provider?: unknown; model?: unknown };
        if (entry.message.role === 'assistant' && typeof provider === 'string' && typeof model === 'string') {
          assistantModel = `${provider}/${model}`;
        }
        break;
      }
      case 'ttsr_injection':
        for (const rule of entry.injectedRules) rules.add(rule);
        break;
      case 'mode_change':
        context.mode = entry.mode;
        context.modeData = entry.data;
        break;
      case 'compaction':
        compactionIndex = position;
        break;
      default:
        break;
    }
  }
  // An explicit model_change wins over the model that happened to answer.
  if (context.models.default === undefined && assistantModel !== undefined) context.models.default = assistantModel;
  const fallback = context.models.default;
  if (fallback !== undefined) {
    const slash = fallback.indexOf('/');
    context.model = slash === -1 ? { provider: '', modelId: fallback } : { provider: fallback.slice(0, slash), modelId: fallback.slice(slash + 1) };
  }
  context.injectedTtsrRules = [...rules];

  const push = (entry: SessionEntry): void => {
    const message = contextMessageOf(entry);
    if (message) context.messages.push(message);
  };
  if (compactionIndex === -1) {
    for (const entry of path) push(entry);
    return context;
  }
  const compaction = path[compactionIndex] as Extract<SessionEntry, { type: 'compaction' }>;
  context.messages.push(createCompactionSummaryMessage(compaction.summary, compaction.tokensBefore, compaction.timestamp));
  let keptFrom = compactionIndex;
  for (let position = 0; position < compactionIndex; position += 1) {
    if ((path[position] as SessionEntry).id === compaction.firstKeptEntryId) {
      keptFrom = position;
      break;
    }
  }
  for (let position = keptFrom; position < compactionIndex; position += 1) push(path[position] as SessionEntry);
  for (let position = compactionIndex + 1; position < path.length; position += 1) push(path[position] as SessionEntry);
  return context;
}
