import type { McpServerDeclaration, McpServerSpec } from '@tessera/contracts';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError as SdkMcpError, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AttemptDeadline } from './attempt-deadline.js';
import { expandSpec, redactor } from './expand-env.js';
import { FileOAuthProvider } from './file-oauth-provider.js';
import { CallSignal, follow } from './call-signal.js';
import { describe, McpError } from './mcp-errors.js';

export { describe };
import { createTransport, isFallbackWorthy } from './mcp-transports.js';
import type { McpAuthorize, McpLog, McpPromptInfo, McpResourceInfo, McpServerStatus, McpToolInfo } from './mcp-types.js';

export interface McpConnectionSettings {
  cwd: string;
  env: NodeJS.ProcessEnv;
  clientInfo: { name: string; version: string };
  /** One connection attempt (transport, handshake, first listings) may take this long. */
  connectTimeoutMs: number;
  restart: { initialDelayMs: number; maxDelayMs: number; maxAttempts: number };
  oauth: { directory: string; redirectUrl: string; authorize?: McpAuthorize } | undefined;
  helperTimeoutMs: number;
  fetch?: typeof fetch;
  log: McpLog;
  /** Called whenever status, tools, prompts or resources change. Must not throw. */
  onChange(): void;
}

/**
 * A connection that stayed up this long counts as healthy: its next crash starts the restart
 * budget afresh. One that dies sooner keeps using up the budget, so a crash loop ends.
 */
const STABLE_AFTER_MS = 60_000;

export interface McpCallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  onProgress?(progress: { progress: number; total?: number; message?: string }): void;
}

/**
 * One MCP server: connects (with SSE fallback and OAuth for remote servers), keeps its tools,
 * prompts and resources, and restarts it with exponential backoff when it goes away. Nothing the
 * server sends is trusted to be well formed; every failure becomes `status: 'failed'` and an
 * error naming the server.
 */
export class McpConnection {
  status: McpServerStatus = 'connecting';
  lastError: string | undefined;
  tools: McpToolInfo[] = [];
  prompts: McpPromptInfo[] = [];
  resources: McpResourceInfo[] = [];
  /** How long the last successful attempt took, from spawn or request to the first listings. */
  startupMs: number | undefined;
  private client: Client | undefined;
  /** Every client made and not yet closed, connecting or connected: `close()` ends them all, so no child outlives the connection. */
  private readonly clients = new Set<Client>();
  private closed = false;
  private started: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private restarts = 0;
  private connectedAt: number | undefined;
  /**
   * Bumped by every attempt, failure, reconnect and close. An attempt or a client whose number
   * is no longer current has been superseded: its result is dropped and its failure ignored, so
   * one failure schedules one restart however many ways it is reported.
   */
  private generation = 0;
  private readonly oauth: FileOAuthProvider | undefined;
  private readonly redact: (text: string) => string;

  constructor(
    readonly declaration: McpServerDeclaration,
    private readonly settings: McpConnectionSettings,
  ) {
    const spec = declaration.spec;
    this.oauth = settings.oauth && spec.type !== 'stdio' && spec.type !== 'ws'
      ? new FileOAuthProvider({ server: declaration.name, serverUrl: spec.url, directory: settings.oauth.directory, redirectUrl: settings.oauth.redirectUrl, clientName: settings.clientInfo.name })
      : undefined;
    this.redact = redactor(spec, settings.env);
  }

  get name(): string {
    return this.declaration.name;
  }

  /**
   * The SDK client while connected, for what this package does not wrap (completions,
   * subscriptions, server-to-client request handlers). Its lifetime is the connection's: a
   * restart replaces it.
   */
  get sdkClient(): Client | undefined {
    return this.status === 'connected' ? this.client : undefined;
  }

  /** Starts connecting once; resolves when the first attempt has succeeded or failed (never rejects). */
  start(): Promise<void> {
    this.started ??= this.attempt();
    return this.started;
  }

  /**
   * Drops the current client and connects again now (the `/mcp` reconnect action). An attempt
   * still in flight is superseded and its client closed, so only one process is ever kept.
   */
  async reconnect(): Promise<void> {
    if (this.closed) return;
    this.generation += 1;
    clearTimeout(this.restartTimer);
    this.restarts = 0;
    this.client = undefined;
    await this.closeClients();
    this.started = this.attempt();
    return this.started;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.generation += 1;
    clearTimeout(this.restartTimer);
    this.client = undefined;
    await this.closeClients();
  }

  async callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<unknown> {
    const client = this.client;
    if (!client || this.status !== 'connected') throw this.unavailable();
    // A signal of our own per call: the SDK never removes the abort listener it adds, and the
    // tool context's signal lives for a whole turn.
    const signal = new CallSignal();
    const unfollow = follow(options.signal, signal);
    try {
      return await client.callTool({ name, arguments: args }, undefined, {
        signal: signal as unknown as AbortSignal,
        timeout: options.timeoutMs,
        ...(options.onProgress ? { onprogress: options.onProgress } : {}),
      });
    } catch (error) {
      if (options.signal.aborted) throw new McpError('mcp_tool_aborted', this.name, `MCP tool "${name}" on server "${this.name}" was aborted.`, { tool: name }, error);
      if (error instanceof SdkMcpError && error.code === ErrorCode.RequestTimeout) {
        throw new McpError('mcp_tool_timeout', this.name, `MCP tool "${name}" on server "${this.name}" did not answer within ${options.timeoutMs} ms; it was cancelled. Raise MCP_TOOL_TIMEOUT (or the toolTimeoutMs option) if it needs longer.`, { tool: name, timeoutMs: options.timeoutMs }, error);
      }
      throw new McpError('mcp_protocol', this.name, `MCP tool "${name}" on server "${this.name}" failed: ${describe(error)}`, { tool: name }, error);
    } finally {
      unfollow();
    }
  }

  async getPrompt(name: string, args: Record<string, string>): Promise<unknown> {
    if (!this.client || this.status !== 'connected') throw this.unavailable();
    return this.client.getPrompt({ name, arguments: args });
  }

  async readResource(uri: string): Promise<unknown> {
    if (!this.client || this.status !== 'connected') throw this.unavailable();
    return this.client.readResource({ uri });
  }

  /** The message a tool gets while its server is down. */
  unavailable(): McpError {
    const why = this.lastError === undefined ? '' : ` (${this.lastError})`;
    return new McpError('mcp_server_unavailable', this.name, `MCP server "${this.name}" is ${this.status === 'connecting' ? 'still connecting' : 'not connected'}${why}. Try again later, or check it with /mcp.`);
  }

  private async attempt(): Promise<void> {
    if (this.closed) return;
    const generation = ++this.generation;
    this.setStatus('connecting');
    // A sign-in still waiting for the user owns the token file's PKCE verifier: a new 401 now
    // would replace it and the user's code could never be exchanged.
    await this.oauth?.signInSettled();
    if (generation !== this.generation) return;
    const began = performance.now();
    let spec: McpServerSpec;
    try {
      spec = expandSpec(this.declaration.spec, this.settings.env, this.name, this.declaration.file);
    } catch (error) {
      this.fail(generation, error, false);
      return;
    }
    const deadline = new AttemptDeadline(this.settings.connectTimeoutMs, () => new McpError('mcp_connect_failed', this.name, `MCP server "${this.name}" did not finish connecting within ${this.settings.connectTimeoutMs} ms (MCP_TIMEOUT raises the limit).`));
    const opening = this.open(spec, deadline);
    let client: Client | undefined;
    try {
      client = await Promise.race([opening, deadline.expired]);
      // Superseded (reconnect) or closed while connecting: this client must not live on.
      if (generation !== this.generation) {
        await this.discard(client);
        return;
      }
      this.client = client;
      const current = client;
      client.onclose = () => this.lost(current, generation);
      await Promise.race([this.refreshAll(client), deadline.expired]);
      if (generation !== this.generation) return;
      this.lastError = undefined;
      this.startupMs = performance.now() - began;
      this.connectedAt = performance.now();
      this.setStatus('connected');
    } catch (error) {
      if (client) {
        if (this.client === client) this.client = undefined;
        await this.discard(client);
      }
      // Lost the race against the timeout: a client that still arrives must not live on unseen.
      opening.then((late) => this.discard(late), () => undefined).catch(() => undefined);
      this.fail(generation, error, !(error instanceof McpError && (error.code === 'mcp_config' || error.code === 'mcp_env_missing' || error.code === 'mcp_auth_required')));
    } finally {
      deadline.stop();
    }
  }

  /** Opens a client: Streamable HTTP falls back to SSE on a 4xx; a 401 runs the OAuth flow once. */
  private async open(spec: McpServerSpec, deadline: AttemptDeadline): Promise<Client> {
    const plan = await createTransport({
      server: this.name,
      spec,
      cwd: this.settings.cwd,
      env: this.settings.env,
      helperTimeoutMs: this.settings.helperTimeoutMs,
      onStderr: (line) => this.settings.log({ severity: 'info', code: 'TESSERA_MCP_STDERR', message: `[${this.name}] ${line}`, server: this.name }),
      ...(this.oauth ? { authProvider: this.oauth } : {}),
      ...(this.settings.fetch ? { fetch: this.settings.fetch } : {}),
    });
    try {
      return await this.connectWith(plan.transport);
    } catch (error) {
      if (error instanceof UnauthorizedError || (error as { code?: unknown }).code === 401) return this.authorizeAndRetry(spec, plan.transport, error, deadline);
      if (plan.fallback && isFallbackWorthy(error)) {
        this.settings.log({ severity: 'info', code: 'TESSERA_MCP_SSE_FALLBACK', message: `MCP server "${this.name}" refused Streamable HTTP (${describe(error)}); trying the older HTTP+SSE transport.`, server: this.name });
        return this.connectWith(plan.fallback());
      }
      throw error;
    }
  }

  private async authorizeAndRetry(spec: McpServerSpec, transport: Transport, cause: unknown, deadline: AttemptDeadline): Promise<Client> {
    const url = this.oauth?.takeAuthorizationUrl();
    const authorize = this.settings.oauth?.authorize;
    const oauth = this.oauth;
    if (!oauth || !url || !authorize) {
      throw new McpError('mcp_auth_required', this.name, `MCP server "${this.name}" needs authorization${authorize ? '' : ', and this host offers no way to authorize (pass an authorize callback to mcpClient())'}: ${describe(cause)}`, {}, cause);
    }
    const signIn = (async () => {
      const answer = await authorize({ server: this.name, authorizationUrl: url, redirectUrl: oauth.redirectUrl });
      const code = typeof answer === 'string' ? answer : answer.code;
      if (typeof answer !== 'string' && !oauth.checkState(answer.state)) {
        throw new McpError('mcp_auth_required', this.name, `MCP server "${this.name}": the authorization answer carries a different state than was sent; authorization abandoned.`);
      }
      await (transport as Transport & { finishAuth(code: string): Promise<void> }).finishAuth(code);
    })();
    oauth.holdDuring(signIn);
    // The user may take minutes in the browser; the host's authorize bounds that wait, not connectTimeoutMs.
    deadline.pause();
    try {
      await signIn;
    } finally {
      deadline.resume();
    }
    const retry = await createTransport({ server: this.name, spec, cwd: this.settings.cwd, env: this.settings.env, helperTimeoutMs: this.settings.helperTimeoutMs, onStderr: () => undefined, authProvider: oauth, ...(this.settings.fetch ? { fetch: this.settings.fetch } : {}) });
    return this.connectWith(retry.transport);
  }

  private async connectWith(transport: Transport): Promise<Client> {
    const client = new Client(this.settings.clientInfo, { capabilities: {} });
    client.onerror = (error) => this.settings.log({ severity: 'warning', code: 'TESSERA_MCP_PROTOCOL', message: `MCP server "${this.name}": ${describe(error)}`, server: this.name });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refreshLater(client, 'tools'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.refreshLater(client, 'prompts'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.refreshLater(client, 'resources'));
    if (this.closed) throw new McpError('mcp_server_unavailable', this.name, `MCP server "${this.name}" was closed while connecting.`);
    this.clients.add(client);
    try {
      await client.connect(transport, { timeout: this.settings.connectTimeoutMs });
    } catch (error) {
      await this.discard(client);
      throw error;
    }
    return client;
  }

  private async refreshAll(client: Client): Promise<void> {
    await Promise.all([this.refresh(client, 'tools'), this.refresh(client, 'prompts'), this.refresh(client, 'resources')]);
  }

  private async refresh(client: Client, kind: 'tools' | 'prompts' | 'resources'): Promise<void> {
    const capabilities = client.getServerCapabilities() ?? {};
    if (!capabilities[kind]) {
      this[kind] = [];
      return;
    }
    const items: unknown[] = [];
    let cursor: string | undefined;
    // Paginated; a server that keeps returning cursors is cut off rather than looped on forever.
    for (let page = 0; page < 100; page += 1) {
      const answer: { nextCursor?: string } & Record<string, unknown> =
        kind === 'tools' ? await client.listTools(cursor ? { cursor } : undefined) : kind === 'prompts' ? await client.listPrompts(cursor ? { cursor } : undefined) : await client.listResources(cursor ? { cursor } : undefined);
      const list = answer[kind];
      if (Array.isArray(list)) items.push(...list);
      cursor = typeof answer.nextCursor === 'string' && answer.nextCursor !== '' ? answer.nextCursor : undefined;
      if (!cursor) break;
    }
    if (kind === 'tools') this.tools = items.filter(isNamed) as McpToolInfo[];
    else if (kind === 'prompts') this.prompts = items.filter(isNamed) as McpPromptInfo[];
    else this.resources = items.filter((item) => typeof (item as { uri?: unknown }).uri === 'string') as McpResourceInfo[];
  }

  private refreshLater(client: Client, kind: 'tools' | 'prompts' | 'resources'): void {
    this.refresh(client, kind).then(
      () => this.client === client && this.settings.onChange(),
      (error: unknown) => this.settings.log({ severity: 'warning', code: 'TESSERA_MCP_PROTOCOL', message: `MCP server "${this.name}": refreshing its ${kind} after list_changed failed: ${describe(error)}`, server: this.name }),
    );
  }

  /** The client closed without our asking: the server crashed or hung up. */
  private lost(client: Client, generation: number): void {
    this.clients.delete(client);
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    if (this.connectedAt !== undefined && performance.now() - this.connectedAt >= STABLE_AFTER_MS) this.restarts = 0;
    this.fail(generation, new McpError('mcp_server_unavailable', this.name, `MCP server "${this.name}" exited or closed the connection`), true);
  }

  private fail(generation: number, error: unknown, retry: boolean): void {
    // A superseded attempt, or a second report of one failure (the client closed and its pending listing rejected).
    if (generation !== this.generation || this.closed) return;
    this.generation += 1;
    this.connectedAt = undefined;
    const { maxAttempts, initialDelayMs, maxDelayMs } = this.settings.restart;
    const message = this.redact(describe(error));
    const canRetry = retry && this.restarts < maxAttempts;
    const delay = Math.min(initialDelayMs * 2 ** this.restarts, maxDelayMs);
    this.lastError = canRetry
      ? `${message.replace(/\.$/, '')}; retrying in ${delay} ms (attempt ${this.restarts + 1} of ${maxAttempts})`
      : retry && this.restarts > 0
        ? `${message.replace(/\.$/, '')}; gave up after ${this.restarts} restarts in a row. Fix the server, then use /mcp reconnect.`
        : message;
    this.setStatus('failed');
    this.settings.log({ severity: 'warning', code: 'TESSERA_MCP_SERVER_FAILED', message: `MCP server "${this.name}": ${this.lastError}`, server: this.name, ...(this.declaration.file ? { file: this.declaration.file } : {}) });
    if (!canRetry) return;
    this.restarts += 1;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.started = this.attempt();
    }, delay);
    this.restartTimer.unref();
  }

  private setStatus(status: McpServerStatus): void {
    this.status = status;
    this.settings.onChange();
  }

  private async discard(client: Client): Promise<void> {
    this.clients.delete(client);
    await client.close().catch(() => undefined);
  }

  private async closeClients(): Promise<void> {
    await Promise.all([...this.clients].map((client) => this.discard(client)));
  }
}

function isNamed(item: unknown): boolean {
  return item !== null && typeof item === 'object' && typeof (item as { name?: unknown }).name === 'string' && (item as { name: string }).name !== '';
}

