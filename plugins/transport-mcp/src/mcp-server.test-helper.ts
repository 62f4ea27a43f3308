import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema, type ElicitResult, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { ApprovalHandler, CommandContribution, Provider } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession, SystemCommandExecutor, type Kernel, type Plugin } from '@tessera/kernel';
import { builtinCommands } from '@tessera/plugin-commands';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import type { ScriptedProvider, ScriptedProviderOptions } from '@tessera/plugin-provider-scripted';
import { builtinTools } from '@tessera/plugin-tools';
import { testPreset } from '@tessera/preset-test';
import { ApprovalRouter, type SessionFactory } from '@tessera/session-hub';
import { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from './mcp-http-handler.js';
import { PROGRESS_EVENT_META } from './prompt-turn.js';
import { mcpServerTransport, type McpServerTransport, type McpServerTransportOptions } from './mcp-server-transport.js';

export interface McpHost {
  kernel: Kernel;
  provider: ScriptedProvider;
  mcp: McpServerTransport;
  handler: McpHttpHandler;
  /** `http://127.0.0.1:<port>/mcp` */
  url: URL;
  dir: string;
  /** Sessions opened through the factory, in order. */
  opened: InteractiveSession[];
  /** A client over Streamable HTTP; with `answer`, it declares elicitation and answers with it. */
  client(options?: { answer?: (message: string) => ElicitResult }): Promise<Client>;
  close(): Promise<void>;
}

/**
 * A Tessera host behind the MCP HTTP handler on a loopback port: a real kernel (scripted model,
 * real tools, permission rules, built-in commands) in a temp directory, an `ApprovalRouter`
 * composed as the approval handler, and a `SessionFactory` over it.
 */
export async function startMcpHost(
  options: {
    turns?: ScriptedProviderOptions['turns'];
    rules?: { allow?: string[]; ask?: string[] };
    transport?: Partial<McpServerTransportOptions>;
    handler?: McpHttpHandlerOptions;
    owner?: string;
    plugins?: Plugin[];
    /** Awaited by the session factory before each open (a slow store, to widen a race). */
    beforeOpen?: () => Promise<void>;
  } = {},
): Promise<McpHost> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-mcp-')));
  const approvals = new ApprovalRouter();
  const kernel = await createKernel({
    plugins: testPreset({
      turns: options.turns ?? [],
      replace: [permissionsPlugin({ rules: { allow: options.rules?.allow ?? [], ask: options.rules?.ask ?? [], deny: [] }, settingsRoot: dir })],
      plugins: [
        definePlugin({ name: 'mcp-approvals', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) }),
        ...builtinTools(),
        ...builtinCommands(),
        ...(options.plugins ?? []),
      ],
    }),
  });
  const opened: InteractiveSession[] = [];
  const sessions: SessionFactory = {
    async open(request) {
      await options.beforeOpen?.();
      const session = new InteractiveSession({
        kernel,
        cwd: request.cwd,
        ...(request.resumeSessionId === undefined ? {} : { resumeSessionId: request.resumeSessionId }),
        ...(request.sessionId === undefined ? {} : { sessionId: request.sessionId }),
      });
      await session.whenReady();
      opened.push(session);
      return session;
    },
    list: (cwd) => InteractiveSession.listResumableSessions(kernel, cwd),
  };
  const mcp = mcpServerTransport({
    sessions,
    approvals,
    cwd: dir,
    name: 'tessera-test',
    commands: () => new SystemCommandExecutor(kernel.getAll(CommandContribution)).listCommands(),
    ...options.transport,
  });
  const handler = createMcpHttpHandler(mcp, options.handler);
  // With `owner`, every request is that owner's, as a host that authenticated it would pass.
  const owner = options.owner;
  const server = createServer(getRequestListener(owner === undefined ? handler : (request: Request) => handler(request, owner)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  const clients: Client[] = [];
  return {
    kernel,
    provider: kernel.get(Provider) as ScriptedProvider,
    mcp,
    handler,
    url,
    dir,
    opened,
    async client(clientOptions = {}) {
      const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: clientOptions.answer ? { elicitation: { form: {} } } : {} });
      const answer = clientOptions.answer;
      if (answer) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message));
      await client.connect(new StreamableHTTPClientTransport(url));
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      await handler.close();
      await mcp.stop();
      await closeServer(server);
      await kernel.shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function closeServer(server: HttpServer): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Which session event a progress notification carries (`_meta['tessera/event']`). */
export function eventOf(update: Progress): unknown {
  return (update as { _meta?: Record<string, unknown> })._meta?.[PROGRESS_EVENT_META];
}

/** The Streamable HTTP transport a client from `McpHost.client()` uses (DELETE through `terminateSession`). */
export function httpTransportOf(client: Client): StreamableHTTPClientTransport {
  return client.transport as StreamableHTTPClientTransport;
}

/** The client side of a stdio connection over in-process streams (newline-delimited JSON-RPC). */
export class StreamClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.output.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.output.end();
    this.onclose?.();
  }
}

/** The text blocks of a tool result, joined. */
export function textOf(result: object): string {
  const content = ((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>;
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}
