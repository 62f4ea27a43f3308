import { describe, expect, it } from 'vitest';
import type { HubSession } from './hub-session.js';
import { OwnerSessions } from './owner-sessions.js';

/** What OwnerSessions reads of a session: its owner, whether it runs, and the `onActive` it sets. */
function fakeSession(owner: string): HubSession & { start(): void; end(): void } {
  const session = {
    owner,
    running: false,
    onActive: undefined as ((session: HubSession) => void) | undefined,
    start() {
      session.running = true;
      session.onActive?.(session as unknown as HubSession);
    },
    end() {
      session.running = false;
    },
  };
  return session as unknown as HubSession & { start(): void; end(): void };
}

describe('OwnerSessions.running', () => {
  it('counts the running sessions of an owner, again after they were found idle and started anew', () => {
    const owners = new OwnerSessions();
    const [a, b, c] = [fakeSession('alice'), fakeSession('alice'), fakeSession('bob')];
    for (const session of [a, b, c]) owners.add(session);
    expect(owners.running('alice')).toBe(0);
    a.start();
    b.start();
    c.start();
    expect(owners.running('alice')).toBe(2);
    expect(owners.running('bob')).toBe(1);
    a.end();
    expect(owners.running('alice')).toBe(1);
    // Found idle above, then started again: counted again.
    a.start();
    expect(owners.running('alice')).toBe(2);
    b.end();
    a.end();
    expect(owners.running('alice')).toBe(0);
    b.start();
    expect(owners.running('alice')).toBe(1);
  });

  it('counts a session added while it runs, and forgets one deleted while it runs', () => {
    const owners = new OwnerSessions();
    const a = fakeSession('alice');
    a.start();
    owners.add(a);
    expect(owners.running('alice')).toBe(1);
    owners.delete(a);
    expect(owners.running('alice')).toBe(0);
    // A deleted session that starts again is no longer the hub's to count.
    a.end();
    a.start();
    expect(owners.running('alice')).toBe(0);
  });
});
