import {
  Clock,
  Compaction,
  ContextWindow,
  ApprovalChain,
  ApprovalHandler,
  Approvals,
  KernelInfo,
  assertValidSessionId,
  describeError,
  Diagnostics,
  messageToHistoryEntry,
  type ISession,
  type ISessionRecord,
  processWarningDiagnostics,
  Provider,
  SessionLogger,
  SessionStore,
  systemClock,
  TesseraError,
  tokenName,
  ToolContribution,
  ToolSourceContribution,
  type SessionServices,
  type Token,
  copyWith,
  createToken,
} from '@tessera/contracts';
import { randomUUID } from 'node:crypto';
import { Container, type BindToFluentSyntax } from 'inversify';
import { contributionProblems } from './contribution-problems.js';
import { KernelCompositionError, SessionConfigurationError, type CompositionProblem } from './errors.js';
import { createHooks, type HookName, type TesseraHooks } from './hooks.js';
import type { CreateKernelOptions, KernelDescription, KernelSessionOptions, KernelSessionScope, PluginDescription } from './kernel-types.js';
import { flattenPlugins, type Plugin, type PluginActivation, type PluginRuntimeContext } from './plugin.js';
import { resolvePluginGraph } from './plugin-graph.js';
import { removeToolsByName, replaceToolsByName } from './replace-tools.js';
import { Session } from './session.js';
import { ContainerSessionServices } from './session-services.js';
import { Stage } from './stage.js';

export type { CreateKernelOptions, KernelDescription, KernelSessionOptions, KernelSessionScope, PluginDescription } from './kernel-types.js';
export { removeToolsByName, replaceToolsByName } from './replace-tools.js';

const toNames = (tokens: readonly Token<unknown>[] | undefined): string[] => (tokens ?? []).map(tokenName);

/**
 * The kernel a container belongs to, bound by `createKernel`: for services that open sessions
 * (a transport's session factory). Resolve it when used, never while plugins register.
 */
export const KernelRef = createToken<Kernel>('Kernel');

/**
 * A composed application: one DI container, one frozen hooks object, and the plugins that
 * filled them. Made by `createKernel`.
 */
export class Kernel {
  readonly container: Container;
  readonly hooks: TesseraHooks;
  readonly plugins: readonly Plugin[];
  private readonly replaced: ReadonlyMap<string, string>;
  /**
   * Open sessions, so `shutdown()` can end them. A session leaves this set when it shuts down.
   * Held strongly on purpose: a WeakRef keeps its target alive until the current job ends,
   * which in a tight async loop (a server, a benchmark) retains every session ever created.
   */
  private readonly sessions = new Set<Session>();
  /**
   * Scopes of open sessions created with tool replacements, removals or service overrides, by
   * the session's services: its own object, where its id may be shared (a resumed copy, a fork),
   * so no session takes or removes another's scope.
   */
  private readonly scopes = new Map<SessionServices, { session: Session; scope: KernelSessionScope }>();
  private readonly booted: Plugin[] = [];
  private closing: Promise<void> | undefined;

  /** @internal — use `createKernel`. */
  private readonly decorated: ReadonlyMap<symbol, readonly string[]>;
  private readonly tapsByPlugin: ReadonlyMap<string, PluginDescription['taps']>;

  constructor(
    plugins: readonly Plugin[],
    replaced: ReadonlyMap<string, string>,
    container: Container,
    hooks: TesseraHooks,
    decorated: ReadonlyMap<symbol, readonly string[]> = new Map(),
    tapsByPlugin: ReadonlyMap<string, PluginDescription['taps']> = new Map(),
    private readonly activations: ReadonlyMap<Plugin, PluginActivation> = new Map(),
  ) {
    this.decorated = decorated;
    this.tapsByPlugin = tapsByPlugin;
    this.plugins = plugins;
    this.replaced = replaced;
    this.container = container;
    this.hooks = hooks;
    hooks.sessionEnd.tap({ name: 'kernel:session-registry', stage: Stage.Observe }, ({ session }) => {
      this.sessions.delete(session as Session);
      if (this.scopes.get(session.services)?.session === session) this.scopes.delete(session.services);
    });
  }

  /** The service bound to `token`; throws when nothing is bound. Sessions resolve through their own services instead. */
  get<T>(token: Token<T>): T {
    return this.container.get<T>(token);
  }

  /** The service bound to `token`, or `undefined` when nothing is. */
  getOptional<T>(token: Token<T>): T | undefined {
    return this.container.isBound(token) ? this.container.get<T>(token) : undefined;
  }

  /** Every value bound to a contribution token; `[]` when none. */
  getAll<T>(token: Token<T>): T[] {
    return this.container.isBound(token) ? this.container.getAll<T>(token) : [];
  }

  /**
   * Swaps the service bound to `token` for sessions created afterwards. Prefer this to
   * `container.rebind`: a service the container built and releases asynchronously (a store's
   * `close`, a logger's `flush`) is released first, which the synchronous rebind cannot do.
   */
  rebind<T>(token: Token<T>): Promise<BindToFluentSyntax<T>> {
    return this.container.rebindAsync<T>(token);
  }

  /** The resolved plugin graph and hook taps, for `doctor` output and tests. */
  describe(): KernelDescription {
    const hooks: KernelDescription['hooks'] = {};
    for (const [name, hook] of Object.entries(this.hooks) as Array<[HookName, TesseraHooks[HookName]]>) {
      hooks[name] = hook.taps.map((tap) => ({ name: tap.name, stage: tap.stage ?? 0 }));
    }
    return {
      plugins: this.plugins.map((plugin) => ({
        name: plugin.name,
        provides: toNames(plugin.provides),
        requires: toNames(plugin.requires),
        optional: toNames(plugin.optional),
        contributes: toNames(plugin.contributes),
        replaces: plugin.replaces === undefined ? [] : typeof plugin.replaces === 'string' ? [plugin.replaces] : [...plugin.replaces],
        taps: [...(this.tapsByPlugin.get(plugin.name) ?? [])],
      })),
      replaced: Object.fromEntries(this.replaced),
      decorated: Object.fromEntries([...this.decorated].map(([token, names]) => [tokenName(token), [...names]])),
      hooks,
    };
  }

  /**
   * A Session wired to this kernel: its provider, contributed tools, store, logger, clock and
   * hooks. The kernel keeps it until `session.shutdown()` (or `kernel.shutdown()`): shut down
   * sessions you are done with.
   */
  createSession(options: KernelSessionOptions = {}): Session {
    if (this.closing) {
      throw new TesseraError('The kernel has been shut down; create a new kernel to start sessions.', {
        code: 'kernel_closed',
        category: 'state',
        recoverable: false,
      });
    }
    // Ids reach stores and logs as file names: checked here, before anything uses them.
    if (options.sessionId !== undefined) assertValidSessionId(options.sessionId);
    const sessionId = options.sessionId ?? randomUUID();
    const services = new ContainerSessionServices(
      this.container,
      { sessionId, cwd: options.cwd ?? process.cwd(), ...(options.model === undefined ? {} : { model: options.model }) },
      options.serviceOverrides,
    );
    // Every part comes through the session's services, so a rebind or a per-session factory
    // (SessionServiceFactory) decides it; options given here win.
    const provider = options.provider ?? services.getOptional(Provider);
    if (!provider) {
      throw new SessionConfigurationError('provider', 'no plugin provides Provider; add a provider plugin (e.g. anthropicProvider(), scriptedProvider()) to the kernel.');
    }
    const createContextWindow = services.getOptional(ContextWindow);
    // copyWith, not a spread: Node 20 adds the fields after a spread copy slowly (docs/adr/0003).
    const session = new Session(copyWith(options, {
      sessionId,
      services,
      provider,
      tools: [...removeToolsByName(replaceToolsByName(services.getAll(ToolContribution), options.replaceTools), options.removeTools), ...(options.tools ?? [])],
      toolSources: [...services.getAll(ToolSourceContribution), ...(options.toolSources ?? [])],
      hooks: this.hooks,
      clock: services.getOptional(Clock) ?? systemClock,
      sessionStore: options.sessionStore ?? services.getOptional(SessionStore),
      sessionLogger: options.sessionLogger ?? services.getOptional(SessionLogger),
      compaction: options.compaction ?? services.getOptional(Compaction),
      contextWindow:
        options.contextWindow ??
        createContextWindow?.({ sessionId, model: options.model ?? provider.model }),
      ...(createContextWindow && !options.createContextWindow
        ? { createContextWindow: (model: string | undefined) => createContextWindow({ sessionId, model: model ?? provider.model }) }
        : {}),
    }));
    this.sessions.add(session);
    if ((options.replaceTools?.length ?? 0) > 0 || (options.serviceOverrides?.length ?? 0) > 0 || (options.removeTools?.length ?? 0) > 0) {
      const scope = { replaceTools: [...(options.replaceTools ?? [])], serviceOverrides: [...(options.serviceOverrides ?? [])], removeTools: [...(options.removeTools ?? [])] };
      this.scopes.set(services, { session, scope });
    }
    return session;
  }

  /**
   * The tool replacements, removals and service overrides an open session of this kernel was
   * created with (`KernelSessionOptions`), for what it starts in its name — a subagent's child
   * session must not leave its parent's sandbox. `undefined` when it had none, or has ended.
   *
   * Pass the session (or anything with its `services`, which are its own: a hook context's
   * `session`): then it is that session's scope alone. An id may name several open sessions (a
   * resumed copy, a fork); given an id, the newest open session with that id that has a scope
   * answers, so a newer one without a scope does not hide an older sandboxed one.
   */
  sessionScope(session: string | Pick<ISession, 'services'>): KernelSessionScope | undefined {
    if (typeof session !== 'string') return this.scopes.get(session.services)?.scope;
    let newest: KernelSessionScope | undefined;
    for (const entry of this.scopes.values()) if (entry.session.sessionId === session) newest = entry.scope;
    return newest;
  }

  /**
   * A session that continues a stored one (`SessionStore.load(id)`): same id, cwd, creation
   * time, system prompt and history; `sessionStart` fires with source `resume`. Options given
   * here (a new provider or model, callbacks) apply on top.
   */
  resumeSession(record: ISessionRecord, options: KernelSessionOptions = {}): Session {
    return this.createSession({
      cwd: record.cwd,
      ...(record.systemPrompt === undefined ? {} : { systemMessage: record.systemPrompt }),
      startSource: 'resume',
      ...options,
      sessionId: record.id,
      createdAt: record.createdAt,
      recordFields: { ...extraRecordFields(record), ...options.recordFields },
      history: record.history.length > 0 ? record.history : record.messages.map((message, index) => messageToHistoryEntry(message, { id: `${record.id}-${index}`, timestamp: record.updatedAt })),
    });
  }

  /**
   * Shuts down open sessions, fires `shutdown`, then calls plugins' `shutdown` in reverse
   * order. Idempotent. A plugin whose shutdown fails is reported; the others still run.
   */
  shutdown(reason = 'other'): Promise<void> {
    this.closing ??= (async () => {
      const failures: string[] = [];
      await Promise.all([...this.sessions].map((session) => session.shutdown({ reason: 'other' })));
      this.sessions.clear();
      this.scopes.clear();
      await this.hooks.shutdown.promise({ reason }).catch((error: unknown) => failures.push(`shutdown hook: ${describeError(error)}`));
      const context = this.runtimeContext();
      for (const plugin of [...this.booted].reverse()) {
        try {
          await this.activations.get(plugin)?.shutdown?.(context);
          await plugin.shutdown?.(context);
        } catch (error) {
          failures.push(`plugin "${plugin.name}": ${describeError(error)}`);
        }
      }
      const diagnostics = this.getOptional(Diagnostics) ?? processWarningDiagnostics;
      // Singletons built by the container are released here (their onDeactivation handlers).
      await this.container.unbindAllAsync().catch((error: unknown) => failures.push(`releasing services: ${describeError(error)}`));
      if (failures.length > 0) {
        diagnostics.report({
          severity: 'error',
          code: 'TESSERA_SHUTDOWN_ERROR',
          source: 'kernel',
          message: `Kernel shutdown finished with errors:\n  ${failures.join('\n  ')}`,
        });
      }
    })();
    return this.closing;
  }

  /** @internal */
  async boot(): Promise<void> {
    const context = this.runtimeContext();
    for (const plugin of this.plugins) {
      try {
        await plugin.boot?.(context);
        await this.activations.get(plugin)?.boot?.(context);
      } catch (error) {
        await this.shutdown('boot_failed');
        throw new KernelCompositionError(
          [{ kind: 'register_failed', message: `Plugin "${plugin.name}" failed to boot: ${describeError(error)}`, plugins: [plugin.name] }],
          error,
        );
      }
      this.booted.push(plugin);
    }
    try {
      await this.hooks.boot.promise({});
      await this.hooks.ready.promise({});
    } catch (error) {
      await this.shutdown('boot_failed');
      throw new KernelCompositionError(
        [{ kind: 'register_failed', message: `A boot/ready hook tap failed: ${describeError(error)}`, plugins: [] }],
        error,
      );
    }
  }

  private runtimeContext(): PluginRuntimeContext {
    return {
      container: this.container,
      hooks: this.hooks,
      get: (token) => this.get(token),
      getOptional: (token) => this.getOptional(token),
      getAll: (token) => this.getAll(token),
    };
  }
}

const STANDARD_RECORD_FIELDS = new Set(['id', 'cwd', 'createdAt', 'updatedAt', 'messages', 'history', 'systemPrompt', 'toolSchemas']);

/** A record's fields beyond the standard ones (`name`, a sandbox snapshot id…), kept on resume. */
function extraRecordFields(record: ISessionRecord): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (!STANDARD_RECORD_FIELDS.has(key) && value !== undefined) fields[key] = value;
  return fields;
}

/**
 * Composes plugins into a kernel: validates the graph (every problem at once), lets each
 * plugin bind and tap, then boots them in order.
 */
export async function createKernel(options: CreateKernelOptions): Promise<Kernel> {
  const graph = resolvePluginGraph(flattenPlugins(options.plugins));
  if (graph.problems.length > 0) throw new KernelCompositionError(graph.problems);

  const container = new Container();
  const hooks = createHooks();
  const decorated = new Map<symbol, string[]>();
  const tapsByPlugin = new Map<string, PluginDescription['taps']>();
  const activations = new Map<Plugin, PluginActivation>();
  const problems: CompositionProblem[] = [];
  const hookEntries = Object.entries(hooks) as Array<[HookName, TesseraHooks[HookName]]>;
  for (const plugin of graph.plugins) {
    const declared = new Set<symbol>([...(plugin.provides ?? []), ...(plugin.contributes ?? [])]);
    // The taps a plugin makes are the ones that appear while it registers.
    const before = hookEntries.map(([, hook]) => new Set(hook.taps));
    try {
      const activation = plugin.register?.({
        hooks,
        decorate: (token, decorator) => {
          container.onActivation(token, (_context, service) => decorator(service as Parameters<typeof decorator>[0]));
          const names = decorated.get(token) ?? [];
          names.push(plugin.name);
          decorated.set(token, names);
        },
        bind: (token) => {
          if (!declared.has(token)) {
            throw new KernelCompositionError([
              {
                kind: 'undeclared_binding',
                message: `Plugin "${plugin.name}" binds ${tokenName(token)} without declaring it; add it to the plugin's provides (or contributes).`,
                plugins: [plugin.name],
                token: tokenName(token),
              },
            ]);
          }
          return container.bind(token);
        },
      });
      if (activation) activations.set(plugin, activation);
    } catch (error) {
      if (error instanceof KernelCompositionError) problems.push(...error.problems);
      else
        problems.push({
          kind: 'register_failed',
          message: `Plugin "${plugin.name}" threw while registering: ${describeError(error)}`,
          plugins: [plugin.name],
        });
    }
    const taps: PluginDescription['taps'] = [];
    hookEntries.forEach(([name, hook], index) => {
      for (const tap of hook.taps) if (!before[index]!.has(tap)) taps.push({ hook: name, name: tap.name, stage: tap.stage ?? 0 });
    });
    if (taps.length > 0) tapsByPlugin.set(plugin.name, taps);
  }
  problems.push(...contributionProblems(container));
  if (problems.length > 0) throw new KernelCompositionError(problems);
  // Where warnings go when no plugin says: Node process warnings.
  if (!container.isBound(Diagnostics)) container.bind(Diagnostics).toConstantValue(processWarningDiagnostics);
  // The approval chain over whatever ApprovalHandler is bound when a session first asks
  // (transient: each session's services resolve it afresh, so a rebound handler is seen).
  if (!container.isBound(Approvals)) {
    container
      .bind(Approvals)
      .toResolvedValue((handler: ApprovalHandler | undefined) => new ApprovalChain(handler), [{ serviceIdentifier: ApprovalHandler, optional: true }]);
  }

  const kernel = new Kernel(graph.plugins, graph.replaced, container, hooks, decorated, tapsByPlugin, activations);
  if (!container.isBound(KernelInfo)) container.bind(KernelInfo).toConstantValue({ describe: () => kernel.describe() });
  // The kernel itself, for services that open sessions of their own (a transport started by the host).
  if (!container.isBound(KernelRef)) container.bind(KernelRef).toConstantValue(kernel);
  await kernel.boot();
  return kernel;
}
