import type { ISession } from '@tessera/contracts';
import type { KernelSessionScope } from '@tessera/kernel';
import type { ISubagentSpawnRequest } from './types.js';

/** Where a scope is looked up: the parent session (by its services), or only its id. */
export type ParentScopeLookup = (parent: Pick<ISession, 'services'> | string) => KernelSessionScope | undefined;

/**
 * The scopes (tool replacements and removals, service overrides: a sandboxed session's tools)
 * that subagent jobs run with: their parent session's. The parent is found by its session
 * object (`request.parentSession`), never by an id that a resumed copy or a fork shares; a
 * request that names only `parentSessionId` gets the newest open session with that id that
 * has a scope.
 *
 * A job may start after its parent ended (a queued background job), so `hold` keeps what was
 * found at spawn for that job's request until the job ends, no scope included, and the job
 * gets that: never the host tools because its parent went away first, nor the scope of a
 * later session with the same id.
 */
/** A request made from another for the same job (a worktree job's, with the worktree as cwd) → the one it was made from. */
const origins = new WeakMap<ISubagentSpawnRequest, ISubagentSpawnRequest>();

/**
 * `request` with `changes`, for the same job: `ParentScopes` finds what it holds for `request`
 * through it, so a runner that hands its inner runner a changed copy keeps the job's scope.
 */
export function deriveSpawnRequest(request: ISubagentSpawnRequest, changes: Partial<ISubagentSpawnRequest>): ISubagentSpawnRequest {
  const derived = { ...request, ...changes };
  origins.set(derived, origins.get(request) ?? request);
  return derived;
}

export class ParentScopes {
  private readonly held = new WeakMap<ISubagentSpawnRequest, { scope: KernelSessionScope | undefined; jobs: number }>();

  /** `live`: the scope of an open session (`kernel.sessionScope`). */
  constructor(private readonly live: ParentScopeLookup) {}

  /** The scope of the job `request` spawns: the one held for it (`undefined` too), else its parent's. */
  get(request: ISubagentSpawnRequest): KernelSessionScope | undefined {
    const origin = origins.get(request);
    const entry = this.held.get(request) ?? (origin === undefined ? undefined : this.held.get(origin));
    return entry ? entry.scope : this.live(request.parentSession ?? request.parentSessionId);
  }

  /**
   * Holds `scope` (`undefined`: the parent had none) for the job of `request`; the returned
   * function releases it (once).
   */
  hold(request: ISubagentSpawnRequest, scope: KernelSessionScope | undefined): () => void {
    const entry = this.held.get(request);
    if (entry) entry.jobs += 1;
    else this.held.set(request, { scope, jobs: 1 });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const current = this.held.get(request);
      if (current && --current.jobs === 0) this.held.delete(request);
    };
  }
}
