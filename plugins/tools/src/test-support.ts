import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AssistantMessage, Provider, ProviderRequest, ToolContext, ToolResult } from '@tessera/contracts';

/** A real temp directory (real path, so symlinked /tmp does not confuse containment). */
export async function tempDir(prefix = 'tessera-tools-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

let calls = 0;

export function toolContext(cwd: string, overrides: Partial<ToolContext> = {}): ToolContext {
  calls += 1;
  return { cwd, sessionId: 'session-1', toolCallId: `call-${calls}`, signal: new AbortController().signal, ...overrides };
}

export function text(result: ToolResult): string {
  return typeof result.output === 'string' ? result.output : result.output.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

/** A provider that answers every call with `answer` and records the requests in `seen`. */
export function replyProvider(answer: string, seen: ProviderRequest[]): Provider {
  return {
    name: 'fake',
    async stream(request): Promise<AssistantMessage> {
      seen.push(request);
      return { role: 'assistant', content: [{ type: 'text', text: answer }], state: 'complete', stopReason: 'end_turn' };
    },
  };
}

export type RouteHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** A loopback HTTP server answering from `routes` (404 otherwise) and counting hits per path. */
export async function routedServer(): Promise<{ base: string; routes: Map<string, RouteHandler>; hits: Map<string, number>; close(): Promise<void> }> {
  const routes = new Map<string, RouteHandler>();
  const hits = new Map<string, number>();
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const handler = routes.get(path);
    if (handler) handler(request, response);
    else response.writeHead(404).end('missing');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, routes, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
