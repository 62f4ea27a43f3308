import { describeError } from '@tessera/contracts';
import type { StoredSessionHead } from '@tessera/session-hub';
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
