import { describeError } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import type { SessionCluster, SessionLease, StoredSessionHead } from '@tessera/session-hub';
import { HubError } from './hub-error.js';
import type { SessionSummary } from './hub-session.js';

/** Work queued per key: each runs after the work before it on the same key, whether that failed or not. */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(work);
    const settled = next.catch(() => undefined);
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return next;
  }
}

/** A failure of the shared store or cluster, as the client sees it: retry later. */
export function unavailable(error: unknown): Error {
  if (error instanceof HubError) return error;
  return new HubError('store_unavailable', 503, `The shared session store failed: ${describeError(error)}. Retry in a moment.`);
}

/** A cluster call; its failure (Redis away) is a 503 the client may retry. */
export async function clustered<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw unavailable(error);
  }
}

/** Takes the session's cluster lock at once: `session_busy` (409) while another replica holds it. */
export async function lockSession(cluster: SessionCluster, id: string): Promise<SessionLease> {
  try {
    return await cluster.lock(id, { waitMs: 0 });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'session_busy') {
      throw new HubError('session_busy', 409, 'Another server replica is running a turn in this session (or changing it); wait for it to end, then retry.');
    }
    throw unavailable(error);
  }
}

/**
 * Ends this process's copy of a session, saving it. In replica mode (`cluster`) the save must not
 * overwrite a turn another replica runs at the copy's revision: it is made under the session's
 * lock (taken here unless `holdsLock`: a turn running here holds it), and the copy ends unsaved
 * when the lock is busy or Redis cannot be reached.
 */
export async function endCopy(cluster: SessionCluster | undefined, interactive: InteractiveSession, options: { holdsLock: boolean; cancelBackgroundTasks: boolean }): Promise<void> {
  let lease: SessionLease | undefined;
  if (cluster && !options.holdsLock) {
    lease = await cluster.lock(interactive.getSessionId(), { waitMs: 0 }).catch(() => undefined);
    if (!lease) cluster.discard?.(interactive.getSessionId());
  }
  try {
    await interactive.shutdown({ reason: 'other', cancelBackgroundTasks: options.cancelBackgroundTasks }).catch(() => undefined);
  } finally {
    await lease?.release();
  }
}

/** A stored session not live on this replica, as a client sees it. */
export function storedSummary(head: StoredSessionHead): SessionSummary {
  const name = head.fields.name;
  return {
    id: head.id,
    ...(typeof name === 'string' ? { name } : {}),
    cwd: head.cwd,
    createdAt: head.createdAt,
    running: false,
    messageCount: head.messageCount,
    permissionMode: 'default',
    pendingPermissions: [],
  };
}
