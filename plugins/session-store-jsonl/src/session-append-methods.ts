import type { AgentMessage, SessionEntry } from './entries.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An entry before the manager stamps `id`, `parentId` and `timestamp`. */
export type NewEntry = DistributiveOmit<SessionEntry, 'id' | 'parentId' | 'timestamp'>;

export interface CompactionExtras {
  shortSummary?: string;
  preserveData?: unknown;
}

export interface SessionInitFields {
  systemPrompt?: string;
  task?: string;
  tools?: string[];
  outputSchema?: unknown;
}

/** Drops keys whose value is undefined, so optional fields are absent from the JSON line. */
function compact<T extends object>(fields: T): T {
  for (const key of Object.keys(fields) as (keyof T)[]) if (fields[key] === undefined) delete fields[key];
  return fields;
}

/**
 * One `append…` per entry type. Each creates exactly one entry whose parent is the current
 * leaf, makes it the leaf and returns its id. Kept apart from `SessionManager` so that class
 * stays about lifecycle and persistence.
 */
export abstract class AppendMethods {
  protected abstract record(fields: NewEntry): string;
  protected abstract requireEntry(id: string): SessionEntry;

  appendMessage(message: AgentMessage): string {
    return this.record({ type: 'message', message });
  }

  appendThinkingLevelChange(thinkingLevel: string): string {
    return this.record({ type: 'thinking_level_change', thinkingLevel });
  }

  /**
   * `model` is `provider/modelId`. Written in both dialects (`model` for oh-my-pi,
   * `provider` + `modelId` for pi). `role` defaults to `default` when read.
   */
  appendModelChange(model: string, role?: string): string {
    const slash = model.indexOf('/');
    const pi = slash === -1 ? {} : { provider: model.slice(0, slash), modelId: model.slice(slash + 1) };
    return this.record(compact({ type: 'model_change' as const, model, role, ...pi }));
  }

  appendCompaction(
    summary: string,
    firstKeptEntryId: string | undefined,
    tokensBefore: number,
    details?: unknown,
    fromExtension?: boolean,
    extras: CompactionExtras = {},
  ): string {
    return this.record(
      compact({
        type: 'compaction' as const,
        summary,
        shortSummary: extras.shortSummary,
        firstKeptEntryId,
        tokensBefore,
        details,
        preserveData: extras.preserveData,
        fromExtension,
      }),
    );
  }

  /** Extension state: stored on the path, never sent to the model. */
  appendCustomEntry(customType: string, data?: unknown): string {
    return this.record(compact({ type: 'custom' as const, customType, data }));
  }

  /** Extension message that is sent to the model (as a `custom` role message). */
  appendCustomMessageEntry(customType: string, content: string | { type: string }[], display: boolean, details?: unknown): string {
    return this.record(compact({ type: 'custom_message' as const, customType, content, display, details }));
  }

  /** Sets (or with `undefined` clears) the label of an existing entry; the last label wins. */
  appendLabelChange(targetId: string, label: string | undefined): string {
    this.requireEntry(targetId);
    return this.record(compact({ type: 'label' as const, targetId, label }));
  }

  appendTtsrInjection(injectedRules: string[]): string {
    return this.record({ type: 'ttsr_injection', injectedRules: [...injectedRules] });
  }

  appendSessionInit(fields: SessionInitFields): string {
    return this.record(compact({ type: 'session_init' as const, ...fields }));
  }

  appendModeChange(mode: string, data?: unknown): string {
    return this.record(compact({ type: 'mode_change' as const, mode, data }));
  }
}
