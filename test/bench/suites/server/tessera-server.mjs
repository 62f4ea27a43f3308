// The Tessera side of the server bench, in its own process: a kernel with the scripted model
// (3 tool calls, then an answer), the SessionHub and the Hono app on loopback. Prints its URL.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHandler } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { readTool } from '@tessera/plugin-tools';
import { jsonlSessionStore } from '@tessera/plugin-session-store-jsonl';
import { toolsPlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { ApprovalRouter, fairRoundsPlugin } from '@tessera/session-hub';
import { hashToken, SessionHub, startServer, TokenAuth } from '@tessera/plugin-transport-http';
import { SCRIPT, TOKEN } from './script.mjs';

const root = mkdtempSync(join(tmpdir(), 'tessera-bench-server-'));
mkdirSync(join(root, 'project'));
for (const name of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(root, 'project', name), `${name}\n`);
const approvals = new ApprovalRouter();
const kernel = await createKernel({
  plugins: testPreset({
    // Requests are not recorded: a server bench must not keep every prompt it was sent.
    provider: new ScriptedProvider({ turns: (request) => SCRIPT.turn(request.messages.at(-1)?.role === 'tool' ? 1 : 0, join(root, 'project')), recordRequests: false }),
    // Sessions are stored on disk, as `tessera serve` stores them (an in-memory store would keep every one).
    replace: [permissionsPlugin({ rules: { allow: ['Read'], ask: [], deny: [] }, settingsRoot: root }), jsonlSessionStore({ agentDir: join(root, 'store'), terminalId: null })],
    // As `tessera serve` composes it (composeHost, serverPreset): after each model reply a session waits its turn.
    plugins: [fairRoundsPlugin(), definePlugin({ name: 'router', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) }), toolsPlugin(readTool())],
  }),
});
const sessions = {
  async open(request) {
    const interactive = new InteractiveSession({ kernel, cwd: request.cwd });
    await interactive.whenReady();
    return interactive;
  },
  list: () => InteractiveSession.listResumableSessions(kernel),
};
const hub = new SessionHub({ sessions, approvals, allowedRoots: [root], defaultCwd: join(root, 'project'), maxSessionsPerOwner: 100_000, maxConcurrentTurnsPerOwner: 100_000 });
if (process.env.BENCH_PROFILE) {
  const { Session } = await import('node:inspector/promises');
  const inspector = new Session();
  inspector.connect();
  await inspector.post('Profiler.enable');
  // The first SIGUSR2 starts the profiler (after the client's warm-up); the second writes the profile.
  let running = false;
  process.on('SIGUSR2', async () => {
    if (!running) {
      running = true;
      await inspector.post('Profiler.start');
      process.stderr.write('profiling\n');
      return;
    }
    const { profile } = await inspector.post('Profiler.stop');
    (await import('node:fs')).writeFileSync(process.env.BENCH_PROFILE, JSON.stringify(profile));
    process.stderr.write('profile written\n');
  });
}
const server = await startServer({ hub, auth: new TokenAuth([{ id: 'bench', sha256: hashToken(TOKEN) }]), rateLimitPerMinute: 0, port: 0, websocket: false });
process.stdout.write(`${server.url}\n`);
process.stdin.on('data', () => {
  globalThis.gc?.();
  process.stdout.write(`${JSON.stringify({ rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed, external: process.memoryUsage().external, sessions: hub.size })}\n`);
});
process.stdin.on('end', async () => {
  await server.close();
  await kernel.shutdown();
  // The project and every session the run stored (a full run writes over 10,000 session files).
  rmSync(root, { recursive: true, force: true });
  process.exit(0);
});
