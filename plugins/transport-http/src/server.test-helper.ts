import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHandler } from '@tessera/contracts';
import { createKernel, definePlugin, type Kernel, type Plugin } from '@tessera/kernel';
import { builtinCommands } from '@tessera/plugin-commands';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import type { ScriptedProviderOptions } from '@tessera/plugin-provider-scripted';
import { jsonlSessionStore } from '@tessera/plugin-session-store-jsonl';
import { builtinTools } from '@tessera/plugin-tools';
import { testPreset } from '@tessera/preset-test';
import { ApprovalRouter, kernelSessionFactory, type SessionFactory } from '@tessera/session-hub';
import { backgroundRuntime } from '@tessera/plugin-background';
import { contextWindow } from '@tessera/plugin-context-window';
import { hashToken } from './auth.js';
import { startServer, type RunningServer, type StartServerOptions } from './serve.js';
import { SessionHub, type SessionHubOptions } from './session-hub.js';

export const TOKEN_A = 'token-alice-0123456789';
export const TOKEN_B = 'token-bob-9876543210';

export interface ServerHarness {
  server: RunningServer;
  hub: SessionHub;
  kernel: Kernel;
  root: string;
  workspace: string;
  storeDir: string;
  request(path: string, init?: RequestInit & { token?: string | null; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/** A kernel (scripted model, real tools, permission rules, JSONL store) behind the HTTP server, on loopback. */
export async function startServerHarness(options: {
  turns?: ScriptedProviderOptions['turns'];
  allow?: string[];
  storeDir?: string;
  root?: string;
  server?: Partial<StartServerOptions>;
  permissionTimeoutMs?: number;
  hub?: Pick<SessionHubOptions, 'maxSessionsPerOwner' | 'maxConcurrentTurnsPerOwner' | 'allowBypassPermissions' | 'externalTurns' | 'allowHostCommands'>;
  /** Compose the in-process background runtime (Bash run_in_background). */
  background?: boolean;
  /** Compose the context tracker: sessions report context usage (`context_update`). */
  contextWindow?: boolean;
  /** More plugins for the kernel (commands, tools). */
  plugins?: Plugin[];
} = {}): Promise<ServerHarness> {
  const root = options.root ?? realpathSync(mkdtempSync(join(tmpdir(), 'tessera-server-')));
  const workspace = join(root, 'project');
  mkdirSync(workspace, { recursive: true });
  const storeDir = options.storeDir ?? join(root, 'store');
  const approvals = new ApprovalRouter();
  const kernel = await createKernel({
    plugins: testPreset({
      turns: options.turns ?? [],
      replace: [permissionsPlugin({ rules: { allow: options.allow ?? [], ask: [], deny: [] }, settingsRoot: workspace }), jsonlSessionStore({ agentDir: storeDir, terminalId: null })],
      plugins: [
        definePlugin({ name: 'router', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) }),
        ...builtinTools(),
        ...builtinCommands(),
        ...(options.background ? [backgroundRuntime({ shell: { logDir: join(root, 'logs'), killGraceMs: 200 } })] : []),
        ...(options.contextWindow ? [contextWindow()] : []),
        ...(options.plugins ?? []),
      ],
    }),
  });
  // The factory the servers use (`tessera serve`, `createTesseraServer`).
  const sessions: SessionFactory = kernelSessionFactory(kernel);
  const hub = new SessionHub({ sessions, approvals, allowedRoots: [root], defaultCwd: workspace, permissionTimeoutMs: options.permissionTimeoutMs ?? 10_000, ...options.hub });
  const { TokenAuth } = await import('./auth.js');
  const server = await startServer({ hub, auth: new TokenAuth([{ id: 'alice', sha256: hashToken(TOKEN_A) }, { id: 'bob', sha256: hashToken(TOKEN_B) }]), ...options.server });
  return {
    server,
    hub,
    kernel,
    root,
    workspace,
    storeDir,
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      const token = init.token === undefined ? TOKEN_A : init.token;
      if (token !== null) headers.set('authorization', `Bearer ${token}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(`${server.url}${path}`, { ...init, headers, ...(body === undefined ? {} : { body }) });
    },
    async close() {
      await server.close();
      await kernel.shutdown();
    },
  };
}

export function removeRoot(root: string): void {
  rmSync(root, { recursive: true, force: true });
}

/** The `data:` payloads of an SSE body, in order (`[DONE]` included). */
export async function readSse(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .map((event) => event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n'))
    .filter((data) => data !== '');
}
