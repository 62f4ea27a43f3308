// Way 2: a plugin that says whom it `replaces`. The kernel drops the named plugin from the
// graph wherever it sits, so this works on a composition you cannot pass options to.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore, type SessionStore as SessionStoreService } from '@tessera/contracts';
import { createKernel, definePlugin, type Plugin, type PluginInput } from '@tessera/kernel';
import { InMemorySessionStore } from '@tessera/kernel/testing';
import { scriptedProvider } from '@tessera/plugin-provider-scripted';
import { jsonlSessionStore } from '@tessera/plugin-session-store-jsonl';
import { expect, it } from 'vitest';

/** The application's composition, as production builds it: sessions go to JSONL files. */
function productionPlugins(agentDir: string): PluginInput[] {
  return [scriptedProvider({ turns: [{ text: 'Stored.' }] }), jsonlSessionStore({ agentDir })];
}

/** Stands in for the JSONL store: the test keeps the instance and reads it afterwards. */
function memoryStoreInsteadOfJsonl(store: SessionStoreService): Plugin {
  return definePlugin({
    name: 'session-store-memory-for-tests',
    replaces: 'session-store-jsonl',
    provides: [SessionStore],
    register({ bind }) {
      bind(SessionStore).toConstantValue(store);
    },
  });
}

it('sessions are saved to the in-memory store, and nothing is written to disk', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'tessera-replaces-'));
  const agentDir = join(folder, 'agent');
  const store = new InMemorySessionStore();
  const kernel = await createKernel({ plugins: [productionPlugins(agentDir), memoryStoreInsteadOfJsonl(store)] });

  const session = kernel.createSession();
  await session.run('Remember this.');
  await kernel.shutdown();

  expect(kernel.describe().replaced).toEqual({ 'session-store-jsonl': 'session-store-memory-for-tests' });
  expect(store.load(session.sessionId)?.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  expect(existsSync(agentDir)).toBe(false);
  await rm(folder, { recursive: true, force: true });
});
