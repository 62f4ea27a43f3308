import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { ApprovalHandler } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession, type Kernel } from '@tessera/kernel';
import { builtinCommands } from '@tessera/plugin-commands';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import type { ScriptedProviderOptions } from '@tessera/plugin-provider-scripted';
import { builtinTools } from '@tessera/plugin-tools';
import { testPreset } from '@tessera/preset-test';
import { ApprovalRouter, type SessionFactory } from '@tessera/session-hub';
import type { AcpSession } from './acp-session.js';
import { serveAcp, type AcpServer } from './serve-acp.js';

/** What the test client answers to `session/request_permission` (an option id, or cancel). */
export type PermissionScript = (request: acp.RequestPermissionRequest) => string | 'cancel' | Promise<string | 'cancel'>;

export interface AcpHarness {
  dir: string;
  kernel: Kernel;
  server: AcpServer;
  /** The factory the agent opens and lists sessions with (a test may wrap its methods). */
  sessions: SessionFactory;
  approvals: ApprovalRouter;
  /** The client side: call agent methods with `agent.request(...)`. */
  agent: acp.ClientContext;
  /** Every `session/update` received, in order. */
  updates: acp.SessionNotification[];
  permissionRequests: acp.RequestPermissionRequest[];
  /** Raw lines the agent wrote (for malformed-input checks). */
  lines: string[];
  /** Writes raw text to the agent's input, as a misbehaving client would. */
  writeRaw(text: string): void;
  /** Updates of one session, by type. */
  of<T extends acp.SessionUpdate['sessionUpdate']>(type: T, sessionId?: string): Array<Extract<acp.SessionUpdate, { sessionUpdate: T }>>;
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real kernel (scripted model, real tools, permission rules and slash commands) in a temp
 * dir, served by `serveAcp` over a pair of byte streams, with the SDK's own client on the other
 * end: the same bytes an editor would exchange with `tessera acp` over stdio.
 */
export async function startAcpHarness(options: { turns?: (dir: string) => ScriptedProviderOptions['turns']; allow?: string[]; ask?: string[]; permission?: PermissionScript } = {}): Promise<AcpHarness> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-acp-')));
  const approvals = new ApprovalRouter();
  const kernel = await createKernel({
    plugins: testPreset({
      turns: options.turns?.(dir) ?? [],
      replace: [permissionsPlugin({ rules: { allow: options.allow ?? [], ask: options.ask ?? [], deny: [] }, settingsRoot: dir })],
      plugins: [definePlugin({ name: 'acp-approvals', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) }), ...builtinTools(), ...builtinCommands()],
    }),
  });
  const sessions: SessionFactory = {
    async open(request) {
      const session = new InteractiveSession({ kernel, cwd: request.cwd, ...(request.resumeSessionId === undefined ? {} : { resumeSessionId: request.resumeSessionId }) });
      await session.whenReady();
      return session;
    },
    list: (cwd) => InteractiveSession.listResumableSessions(kernel, cwd),
  };

  const toAgent = new PassThrough();
  const fromAgent = new PassThrough();
  const lines: string[] = [];
  let buffered = '';
  fromAgent.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      lines.push(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
  });
  const server = serveAcp({ sessions, approvals, input: toAgent, output: fromAgent });

  const updates: acp.SessionNotification[] = [];
  const permissionRequests: acp.RequestPermissionRequest[] = [];
  const client = acp
    .client({ name: 'test-editor' })
    .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissionRequests.push(params);
      const answer = (await options.permission?.(params)) ?? 'cancel';
      return { outcome: answer === 'cancel' ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: answer } };
    });
  const connection = client.connect(acp.ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>));

  const waitFor = async (predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> => {
    const started = Date.now();
    while (!predicate()) {
      if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  return {
    dir,
    kernel,
    server,
    sessions,
    approvals,
    agent: connection.agent,
    updates,
    permissionRequests,
    lines,
    writeRaw: (text) => void toAgent.write(text),
    of: (type, sessionId) =>
      updates.filter((note) => note.update.sessionUpdate === type && (sessionId === undefined || note.sessionId === sessionId)).map((note) => note.update) as never,
    waitFor,
    async close() {
      connection.close();
      await server.close();
      await kernel.shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The `InteractiveSession` behind a session open on the harness's connection. */
export function interactiveOf(harness: AcpHarness, sessionId: string): InteractiveSession {
  const session = (harness.server.agent as unknown as { sessions: Map<string, AcpSession> }).sessions.get(sessionId);
  if (!session) throw new Error(`Session ${sessionId} is not open on the harness's connection`);
  return session.interactive;
}

/** Initializes the connection and opens a session in the harness's dir. */
export async function openSession(harness: AcpHarness): Promise<string> {
  await harness.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await harness.agent.request(acp.methods.agent.session.new, { cwd: harness.dir, mcpServers: [] });
  return sessionId;
}
