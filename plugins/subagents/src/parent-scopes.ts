import type { KernelSessionScope } from '@tessera/kernel';

/**
 * The scopes (tool replacements, service overrides: a sandboxed session's tools) of sessions
 * that start subagent jobs. A job looks its parent's scope up when it starts, which may be after
 * the parent ended (a queued background job): so each job holds its parent's scope from spawn
 * until it ends, and a subagent never runs on the host because its parent went away first.
 */
export class ParentScopes {
  private readonly held = new Map<string, { scope: KernelSessionScope; jobs: number }>();

  /** `live`: the scope of an open session (`kernel.sessionScope`). */
  constructor(private readonly live: (sessionId: string) => KernelSessionScope | undefined) {}

  /** The parent's scope: the open session's, else the one held for its jobs. */
  get(parentSessionId: string): KernelSessionScope | undefined {
    return this.live(parentSessionId) ?? this.held.get(parentSessionId)?.scope;
  }

  /** Holds `scope` for one job of `parentSessionId`; the returned function releases it (once). */
  hold(parentSessionId: string, scope: KernelSessionScope): () => void {
    const entry = this.held.get(parentSessionId);
    if (entry) {
      entry.scope = scope;
      entry.jobs += 1;
    } else {
      this.held.set(parentSessionId, { scope, jobs: 1 });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const current = this.held.get(parentSessionId);
      if (current && --current.jobs === 0) this.held.delete(parentSessionId);
    };
  }
}
