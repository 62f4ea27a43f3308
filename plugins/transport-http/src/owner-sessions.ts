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
  /**
   * Per owner, the live sessions that started a turn since they were last found idle: a superset
   * of the running ones, so `running` looks at these and not at every session the owner has.
   */
  private readonly active = new Map<string, Set<HubSession>>();
  private readonly markActive = (session: HubSession): void => {
    if (!this.live.get(session.owner)?.has(session)) return;
    const active = this.active.get(session.owner);
    if (active) active.add(session);
    else this.active.set(session.owner, new Set([session]));
  };

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
    const active = this.active.get(owner);
    if (active === undefined) return 0;
    let running = 0;
    // Sessions whose turn ended since are let go here (a turn's end sets no flag the hub sees).
    for (const session of active) {
      if (session.running) running += 1;
      else active.delete(session);
    }
    if (active.size === 0) this.active.delete(owner);
    return running;
  }

  add(session: HubSession): void {
    const mine = this.live.get(session.owner);
    if (mine) mine.add(session);
    else this.live.set(session.owner, new Set([session]));
    session.onActive = this.markActive;
    if (session.running) this.markActive(session);
  }

  delete(session: HubSession): void {
    const mine = this.live.get(session.owner);
    mine?.delete(session);
    if (mine?.size === 0) this.live.delete(session.owner);
    if (session.onActive === this.markActive) session.onActive = undefined;
    const active = this.active.get(session.owner);
    active?.delete(session);
    if (active?.size === 0) this.active.delete(session.owner);
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
    this.active.clear();
  }
}
