import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { kernelSessionFactory } from '@tessera/session-hub';
import { afterEach, describe, expect, it } from 'vitest';
import { HubSession, Turn } from './hub-session.js';
import { OwnerSessions } from './owner-sessions.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

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

describe('OwnerSessions.running with a real HubSession', () => {
  it('counts the session once its `turn` or `starting` is set, again after it was found idle', async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-owners-')));
    const kernel = await createKernel({ plugins: testPreset() });
    const interactive = await kernelSessionFactory(kernel).open({ cwd });
    // Made as `SessionHub.adopt` makes it.
    const session = new HubSession(interactive.getSessionId(), 'alice', cwd, new Date().toISOString(), interactive);
    cleanups.push(async () => {
      session.dispose();
      await interactive.shutdown();
      await kernel.shutdown();
      rmSync(cwd, { recursive: true, force: true });
    });
    const owners = new OwnerSessions();
    // Added while idle: only the setters can mark it active.
    owners.add(session);
    expect(owners.running('alice')).toBe(0);
    const turn = new Turn('turn-here');
    session.turn = turn;
    expect(owners.running('alice')).toBe(1);
    turn.end();
    expect(owners.running('alice')).toBe(0);
    session.starting = true;
    expect(owners.running('alice')).toBe(1);
    session.starting = false;
    expect(owners.running('alice')).toBe(0);
    // A turn another replica runs, followed here, counts too.
    session.turn = new Turn('turn-elsewhere', true);
    expect(owners.running('alice')).toBe(1);
    expect(owners.running('bob')).toBe(0);
  });
});
