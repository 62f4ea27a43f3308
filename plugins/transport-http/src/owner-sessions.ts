import type { HubSession } from './hub-session.js';

/**
 * The hub's sessions counted per owner: the live ones (least recently used first), so per-token
 * limits and lists never scan every session, and the ones being opened now. A slot is taken
 * (`reserve`) before the session it is for opens, and counts until that session is live or its
 * open failed: two opens for one owner that find room at the same moment never both take it.
 */
export class OwnerSessions {
  private readonly live = new Map<string, Set<HubSession>>();
  private readonly opening = new Map<string, number>();

  /** The owner's live sessions, least recently used first. */
  of(owner: string): HubSession[] {
    return [...(this.live.get(owner) ?? [])];
  }

  /** The owner's live sessions and the ones being opened for it. */
  count(owner: string): number {
    return (this.live.get(owner)?.size ?? 0) + (this.opening.get(owner) ?? 0);
  }

  /** How many of the owner's live sessions run a turn (here, or followed from another replica). */
  running(owner: string): number {
    let running = 0;
    for (const session of this.live.get(owner) ?? []) if (session.running) running += 1;
    return running;
  }

  add(session: HubSession): void {
    const mine = this.live.get(session.owner);
    if (mine) mine.add(session);
    else this.live.set(session.owner, new Set([session]));
  }

  delete(session: HubSession): void {
    const mine = this.live.get(session.owner);
    mine?.delete(session);
    if (mine?.size === 0) this.live.delete(session.owner);
  }

  /** Marks `session` as just used: it becomes the owner's most recently used. */
  touch(session: HubSession): void {
    const mine = this.live.get(session.owner);
    if (!mine?.delete(session)) return;
    mine.add(session);
  }

  /**
   * Counts one more session of `owner` as being opened, until the returned function is called
   * (idempotent): call it once the session is live (`add`), or its open failed.
   */
  reserve(owner: string): () => void {
    this.opening.set(owner, (this.opening.get(owner) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.opening.get(owner) ?? 1) - 1;
      if (left > 0) this.opening.set(owner, left);
      else this.opening.delete(owner);
    };
  }

  /** Forgets every live session (the hub shuts down); reservations end with their opens. */
  clear(): void {
    this.live.clear();
  }
}
