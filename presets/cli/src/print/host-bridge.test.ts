import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, InteractiveSession } from '@tessera/kernel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultFlags } from '../args.js';
import { cliPreset } from '../preset.js';
import { ControlChannel } from './control-channel.js';
import { HostBridge } from './host-bridge.js';
import { UserQueue } from './user-queue.js';

// Each listing is taken as the real one is, then held until the test lets it go: a slow
// listing, so the test decides in which order listings come back.
const listings = vi.hoisted(() => ({ started: 0, released: 0, held: [] as Array<() => void> }));
vi.mock('../host-adapters.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../host-adapters.js')>();
  return {
    ...actual,
    hostListings: async (...args: Parameters<typeof actual.hostListings>) => {
      listings.started += 1;
      const taken = await actual.hostListings(...args);
      await new Promise<void>((resolve) => listings.held.push(resolve));
      return taken;
    },
  };
});

/** Waits until every listing started so far (a listing may start a tick later) is taken: held, or already let go. */
async function listingsTaken(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await vi.waitFor(() => expect(listings.held.length + listings.released).toBe(listings.started));
}

/** Lets the held listings go, the newest first, until none is held or coming. */
async function releaseNewestFirst(): Promise<void> {
  for (;;) {
    // Also waits for what the last step let run: an answer, a next listing's start.
    await listingsTaken();
    if (listings.held.length === 0) return;
    while (listings.held.length > 0) {
      listings.held.pop()!();
      listings.released += 1;
    }
  }
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('HostBridge: initialize once the session runs', () => {
  it('answers in the order the requests came, and a slow listing never replaces a newer one', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-host-bridge-'));
    const kernel = await createKernel({ plugins: cliPreset({ cwd: dir, home: dir, provider: { kind: 'demo' }, sessionLog: false, sessionPersistence: false }) });
    const interactive = new InteractiveSession({ kernel, cwd: dir });
    try {
      await interactive.whenReady();
      const session = interactive.getSession();
      const written: Array<Record<string, unknown>> = [];
      const io = { stdout: () => undefined, stderr: () => undefined, cwd: dir, env: {}, home: dir };
      const bridge = new HostBridge(new ControlChannel((message) => written.push(message)), undefined, defaultFlags(), io);
      bridge.attach(session);
      bridge.kernel = kernel;
      const queue = new UserQueue();
      const initialize = (requestId: string, agents?: Record<string, unknown>): void =>
        bridge.handleRequest({ type: 'control_request', request_id: requestId, request: { subtype: 'initialize', ...(agents ? { agents } : {}) } }, 1, interactive, session, queue);
      const agent = (description: string): Record<string, unknown> => ({ description, prompt: `You are ${description}.` });

      initialize('init_2', { alpha: agent('the first') });
      await listingsTaken();
      // Sent while init_2's listing (without beta) is still on its way.
      initialize('init_3', { beta: agent('the second') });
      initialize('init_4');
      await releaseNewestFirst();
      initialize('init_5', { gamma: agent('the third') });
      // The input may end here: `answered()` waits for init_5's answer, whose listing is held.
      let settled = false;
      const answered = bridge.answered().then(() => (settled = true));
      await listingsTaken();
      expect(settled).toBe(false);
      await releaseNewestFirst();
      await answered;
      expect(written.at(-1)?.response).toMatchObject({ request_id: 'init_5', subtype: 'success' });

      const answers = written.map((message) => message.response as { subtype: string; request_id: string; response?: { agents: Array<{ name: string }> } });
      expect(answers.map((answer) => [answer.request_id, answer.subtype])).toEqual([
        ['init_2', 'success'],
        ['init_3', 'success'],
        ['init_4', 'success'],
        ['init_5', 'success'],
      ]);
      const named = (requestId: string): string[] =>
        answers
          .find((answer) => answer.request_id === requestId)!
          .response!.agents.map((listed) => listed.name)
          .filter((name) => name === 'alpha' || name === 'beta');
      expect(named('init_2')).toEqual(['alpha']);
      expect(named('init_3')).toEqual(['alpha', 'beta']);
      expect(named('init_4')).toEqual(['alpha', 'beta']);
      expect(named('init_5')).toEqual(['alpha', 'beta']);
      expect(bridge.listings?.agents.map((listed) => listed.name)).toEqual(expect.arrayContaining(['alpha', 'beta']));
    } finally {
      await interactive.shutdown();
      await kernel.shutdown();
    }
  });
});
