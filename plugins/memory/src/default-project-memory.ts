import type {
  MemoryAppendResult,
  MemoryDecisionResult,
  MemoryDocument,
  MemoryEntryInput,
  MemoryEvent,
  MemoryProposeResult,
  MemoryReference,
  MemoryStartupCaps,
  MemoryStartupIndex,
  MemoryTopicSummary,
  PendingMemoryCandidate,
  ProjectMemory,
} from '@tessera/contracts';
import { MemoryCandidateNotFoundError } from './memory-errors.js';
import type { MemoryPolicyEvaluator } from './memory-policy-evaluator.js';
import { validateEntry } from './memory-text.js';
import { PendingMemoryStore } from './pending-memory-store.js';
import { ProjectMemoryStore } from './project-memory-store.js';

export interface DefaultProjectMemoryOptions {
  /** The project root (a session's cwd). */
  readonly root: string;
  readonly policy: MemoryPolicyEvaluator;
  /** Milliseconds since the epoch (the kernel's `Clock`). */
  readonly now: () => number;
  /** Stamped on events; absent for a store used without a session. */
  readonly sessionId?: string;
}

/**
 * `ProjectMemory` over the project's files: `ProjectMemoryStore` for the index and topics,
 * `PendingMemoryStore` for candidates, `MemoryPolicyEvaluator` in front of every write. The
 * events and used references are this instance's (one per session), not the files'.
 */
export class DefaultProjectMemory implements ProjectMemory {
  readonly root: string;
  private readonly store: ProjectMemoryStore;
  private readonly pendingStore: PendingMemoryStore;
  private readonly recorded: MemoryEvent[] = [];
  private lastUsed: readonly MemoryReference[] = [];

  constructor(private readonly options: DefaultProjectMemoryOptions) {
    this.root = options.root;
    this.store = new ProjectMemoryStore({ root: options.root, policy: options.policy });
    this.pendingStore = new PendingMemoryStore({ root: options.root, now: () => this.isoNow() });
  }

  list(): Promise<MemoryTopicSummary[]> {
    return this.store.list();
  }

  show(topic?: string): Promise<MemoryDocument> {
    return this.store.show(topic);
  }

  async append(entry: MemoryEntryInput): Promise<MemoryAppendResult> {
    const result = await this.store.append(entry);
    if (result.refused !== undefined) return { topic: result.topic, deduplicated: false, refused: result.refused };
    if (result.deduplicated) return { topic: result.topic, deduplicated: true };
    const event = this.record({ type: 'add', ...this.base(result.topic), kind: result.kind, text: result.text });
    return { topic: result.topic, deduplicated: false, event };
  }

  async propose(entry: MemoryEntryInput & { readonly source?: string }): Promise<MemoryProposeResult> {
    const valid = validateEntry(entry);
    const decision = this.options.policy.evaluate(`${valid.topic} ${valid.text}`);
    if (!decision.allowed) return { deduplicated: false, refused: { kind: decision.kind, label: decision.label, message: decision.message } };
    const pending = await this.pendingStore.find(valid);
    if (pending !== undefined) return { candidate: pending, deduplicated: true };
    if (await this.store.contains(valid.topic, valid.text)) return { deduplicated: true };
    return { candidate: await this.pendingStore.add(valid, entry.source ?? 'user'), deduplicated: false };
  }

  pending(): Promise<PendingMemoryCandidate[]> {
    return this.pendingStore.list();
  }

  async approve(id: string): Promise<MemoryDecisionResult> {
    const candidate = await this.take(id);
    const stored = await this.store.append(candidate);
    const append: MemoryAppendResult =
      stored.refused === undefined ? { topic: stored.topic, deduplicated: stored.deduplicated } : { topic: stored.topic, deduplicated: false, refused: stored.refused };
    const event = this.record({
      type: 'approve',
      ...this.base(candidate.topic),
      candidateId: candidate.id,
      kind: candidate.kind,
      text: candidate.text,
      deduplicated: stored.deduplicated,
    });
    return { candidate, event, append };
  }

  async reject(id: string): Promise<MemoryDecisionResult> {
    const candidate = await this.take(id);
    const event = this.record({ type: 'reject', ...this.base(candidate.topic), candidateId: candidate.id, kind: candidate.kind, text: candidate.text });
    return { candidate, event };
  }

  recordUsed(references: readonly MemoryReference[]): void {
    this.lastUsed = Object.freeze(references.map((reference) => Object.freeze({ ...reference })));
  }

  used(): readonly MemoryReference[] {
    return this.lastUsed;
  }

  events(): readonly MemoryEvent[] {
    return [...this.recorded];
  }

  restore(state: { readonly events?: readonly MemoryEvent[]; readonly used?: readonly MemoryReference[] }): void {
    if (state.events !== undefined) this.recorded.splice(0, this.recorded.length, ...state.events);
    if (state.used !== undefined) this.recordUsed(state.used);
  }

  startupIndex(caps?: Partial<MemoryStartupCaps>): Promise<MemoryStartupIndex> {
    return this.store.startupIndex(caps);
  }

  private async take(id: string): Promise<PendingMemoryCandidate> {
    const candidate = await this.pendingStore.remove(id);
    if (candidate === undefined) throw new MemoryCandidateNotFoundError(id, (await this.pendingStore.list()).map((pending) => pending.id));
    return candidate;
  }

  private base(topic: string): { at: string; topic: string; sessionId?: string } {
    return { at: this.isoNow(), topic, ...(this.options.sessionId === undefined ? {} : { sessionId: this.options.sessionId }) };
  }

  private record<E extends MemoryEvent>(event: E): E {
    this.recorded.push(event);
    return event;
  }

  private isoNow(): string {
    return new Date(this.options.now()).toISOString();
  }
}
