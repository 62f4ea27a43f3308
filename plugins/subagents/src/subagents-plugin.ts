import {
  AgentDefinitionContribution,
  AgentDefinitionSourceContribution,
  ApprovalHandler,
  Clock,
  createToken,
  Diagnostics,
  diagnosticReport,
  processWarningDiagnostics,
  Provider,
  SETTING_SOURCES,
  isSettingSourceList,
  SessionServiceFactoryContribution,
  SubagentLauncher,
  copyWith,
  ToolContribution,
  type AgentDefinition,
  type Diagnostic,
  type DiagnosticsReporter,
  type SessionServiceFactory,
  type SettingSource,
} from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin, ContainerSessionServices, KernelRef, type ServiceResolver } from '@tessera/kernel';
import { AgentTaskManagerToken, BackgroundTaskError } from '@tessera/plugin-background';
import { discoverAgentDefinitions, type TAgentDefinitionReader } from './agent-definition-discovery.js';
import { AgentDefinitionRegistry } from './agent-definitions.js';
import { GitWorktreeIsolationAdapter } from './git-worktree-isolation-adapter.js';
import { createInProcessSubagentRunner, type IInProcessSubagentRunnerDeps } from './in-process-subagent-runner.js';
import { ParentScopes } from './parent-scopes.js';
import { SubagentApprovalRouter } from './subagent-approval-router.js';
import { createSubagentLauncher } from './subagent-launcher.js';
import { SubagentManager, type SubagentManagerOptions } from './subagent-manager.js';
import { createWorktreeSubagentRunner, type ISubagentWorktreeAdapter } from './worktree-subagent-runner.js';
import type { ISubagentSpawnRequest } from './types.js';

export const SubagentManagerToken = createToken<SubagentManager>('SubagentManager');
export const AgentDefinitions = createToken<AgentDefinitionRegistry>('AgentDefinitions');

export interface SubagentsPluginOptions
  extends Pick<SubagentManagerOptions, 'maxConcurrent' | 'maxDepth' | 'watchdog' | 'eventSink' | 'onError'>,
    Pick<IInProcessSubagentRunnerDeps, 'logsDir' | 'modelAliases' | 'parentModel' | 'permissionMode' | 'getParentSession' | 'systemPromptSuffix' | 'contextFiles'> {
  /** Project directory searched for `.md` agents (default `process.cwd()`). */
  cwd?: string;
  home?: string;
  /**
   * Claude Code's `settingSources`: only the `.md` agents of these sources are discovered —
   * `project`: `.tessera/agents`, `.agents/agents`, `.claude/agents`; `user`:
   * `~/.tessera/agents`, `~/.claude/agents` (`local` has none) — and only their context files
   * reach an agent's prompt (`user` ~/.claude/CLAUDE.md, `project` AGENTS.md / CLAUDE.md,
   * `local` CLAUDE.local.md). Built-ins, `definitions`, contributions and bundle plugins'
   * agents are not filtered. `[]`: none. Default: all of them.
   */
  settingSources?: readonly SettingSource[];
  /** Set false to use only built-ins and `definitions`. */
  discover?: boolean;
  /** Extra definitions; they win over discovered ones. */
  definitions?: readonly AgentDefinition[];
  readDefinition?: TAgentDefinitionReader;
  /** Worktree isolation adapter (default: the git CLI adapter); `false` refuses isolated jobs. */
  worktree?: ISubagentWorktreeAdapter | false;
  /** Receives discovery diagnostics (bad agent files). Default: a `Diagnostics` warning per skipped file. */
  onDiagnostics?: (diagnostics: Diagnostic[]) => void;
  /**
   * The parent's approver. When given, this plugin PROVIDES `ApprovalHandler` (so no other
   * plugin may) and binds a router that sends subagent approvals through their job. Without
   * it, an `ApprovalHandler` bound by another plugin is wrapped at boot (see the docs for the
   * plugin order this needs).
   */
  approvalHandler?: ApprovalHandler;
}

const PLUGIN_NAME = 'subagents';

function validate(options: SubagentsPluginOptions): void {
  const fail = (option: string, problem: string): never => {
    throw new PluginOptionsError('subagents', PLUGIN_NAME, option, problem);
  };
  if (options.maxConcurrent !== undefined && !(Number.isInteger(options.maxConcurrent) && options.maxConcurrent > 0)) {
    fail('maxConcurrent', `must be a positive integer (got ${String(options.maxConcurrent)})`);
  }
  if (options.maxDepth !== undefined && !(Number.isInteger(options.maxDepth) && options.maxDepth >= 0)) {
    fail('maxDepth', `must be a non-negative integer (got ${String(options.maxDepth)})`);
  }
  const sources = options.settingSources;
  if (sources !== undefined && !isSettingSourceList(sources)) {
    fail('settingSources', `must be a list of ${SETTING_SOURCES.join(', ')} (the sources whose agent folders and context files are read)`);
  }
  if (options.definitions !== undefined && !Array.isArray(options.definitions)) fail('definitions', 'must be an array of agent definitions');
  const worktree = options.worktree;
  if (worktree !== undefined && worktree !== false && !(typeof worktree?.prepare === 'function' && typeof worktree.isClean === 'function' && typeof worktree.remove === 'function')) {
    fail('worktree', 'must be false or a worktree adapter ({ prepare, isClean, remove })');
  }
  if (options.approvalHandler !== undefined && typeof options.approvalHandler?.requestApproval !== 'function') {
    fail('approvalHandler', 'must have requestApproval(request)');
  }
}

/**
 * A job of a session with a scope of its own (a sandbox client's tools) cannot go to a remote
 * worker: the tools and the client live in this process, and the worker would run the agent's
 * tools on its own host, outside the sandbox.
 */
function refuseScoped(scopes: ParentScopes, request: ISubagentSpawnRequest): undefined {
  if (scopes.get(request) === undefined) return undefined;
  throw new BackgroundTaskError(
    'validation',
    `Session ${request.parentSessionId} runs its tools in a sandbox (its sandboxClient), but subagent jobs here run on background workers (AgentTaskManagerToken, e.g. BullMQ), ` +
      `which would run the agent's tools on the worker's host, outside that sandbox. Compose the worker runtime with subagents off (bullmqBackgroundRuntime({ subagents: false })) ` +
      'so subagents run in this process, where they inherit the sandbox, or start the agent from a session without a sandboxClient.',
    { code: 'subagent_sandbox_unsupported', details: { parentSessionId: request.parentSessionId, reason: 'remote_worker' } },
  );
}

/**
 * Holds the parent's scope for the job (in-process: the child inherits it), no scope included,
 * so the job never looks its parent up again by id; refuses a worktree, which the sandbox cannot reach.
 */
function holdScope(scopes: ParentScopes, request: ISubagentSpawnRequest): () => void {
  const scope = scopes.get(request);
  if (scope !== undefined && request.isolation === 'worktree') {
    throw new BackgroundTaskError(
      'validation',
      `Session ${request.parentSessionId} runs its tools in a sandbox (its sandboxClient); isolation 'worktree' makes a git worktree on this host, which the sandboxed tools cannot reach. ` +
        'Start the agent without worktree isolation: it works in the same sandbox.',
      { code: 'subagent_sandbox_unsupported', details: { parentSessionId: request.parentSessionId, reason: 'worktree' } },
    );
  }
  return scopes.hold(request, scope);
}

/**
 * Each session's own launcher (`session.services.get(SubagentLauncher)`): it names that session
 * as the parent of what it launches, by its services, so a job takes this session's scope and
 * not that of a resumed copy or a fork with the same id. It launches through the kernel's
 * binding, which `launcher` looks up on each launch: a session that never launches never
 * builds the manager, and a rebind reaches sessions already open.
 */
function sessionLaunchers(launcher: () => SubagentLauncher): SessionServiceFactory<SubagentLauncher> {
  return {
    token: SubagentLauncher,
    create: (seed, services) => ({
      // Async: a launcher that cannot be resolved (the manager failed to build) rejects the launch.
      launch: async (request) =>
        launcher().launch(request.parentSession !== undefined || request.parentSessionId !== seed.sessionId ? request : copyWith(request, { parentSession: { services } })),
    }),
  };
}

/**
 * Subagents for a kernel: a `SubagentManager` whose jobs run as in-process child sessions
 * (kernel provider, tools, hooks), optionally in git worktrees. Agent definitions are the
 * built-ins plus `.md` files discovered at boot and `AgentDefinitionContribution`s, then
 * `AgentDefinitionSourceContribution`s (bundle plugins), re-read whenever a source changes.
 *
 * The factory only checks and keeps `options`. Each kernel's `register()` makes its own
 * registry and approval router, and its container builds its own manager on first use (shut
 * down when the kernel releases its services), so one plugin value composes into any number
 * of kernels. Each job looks up the kernel's `Provider`, `Clock` and `ToolContribution` tools
 * when it starts, and its child session gets services of its own (`session.services`), so a
 * rebind after `createKernel` reaches jobs started afterwards.
 */
export function subagents(options: SubagentsPluginOptions = {}): Plugin {
  validate(options);
  return definePlugin({
    name: PLUGIN_NAME,
    provides: [SubagentManagerToken, AgentDefinitions, SubagentLauncher, ...(options.approvalHandler ? [ApprovalHandler] : [])],
    contributes: [SessionServiceFactoryContribution],
    optional: [
      Provider,
      Clock,
      ToolContribution,
      AgentDefinitionContribution,
      AgentDefinitionSourceContribution,
      AgentTaskManagerToken,
      ...(options.onDiagnostics ? [] : [Diagnostics]),
      ...(options.approvalHandler ? [] : [ApprovalHandler]),
    ],
    register({ bind, decorate, hooks }) {
      // Per kernel: its registry, its approval router and (on first use) its manager.
      const registry = new AgentDefinitionRegistry();
      const approvals = new SubagentApprovalRouter();
      const ownsManager = new WeakSet<SubagentManager>();
      const build = (container: ServiceResolver): SubagentManager => {
        // Looked up per report: a Diagnostics rebound after createKernel is the one told.
        const diagnostics: DiagnosticsReporter = {
          report: (report) => (container.get(Diagnostics, { optional: true }) ?? processWarningDiagnostics).report(report),
        };
        // A job runs with its parent session's tool replacements and service overrides (a
        // sandboxed session's tools), held from spawn until it ends.
        const scopes = new ParentScopes((sessionId) => container.get(KernelRef, { optional: true })?.sessionScope(sessionId));
        const inner = createInProcessSubagentRunner({
          ...options,
          // A fresh view per job: provider, clock and tools as bound when the job starts.
          services: (overrides) => new ContainerSessionServices(container, undefined, overrides),
          parentScope: (request) => scopes.get(request),
          hooks,
          definitions: registry,
          approvals,
        });
        const runner =
          options.worktree === false
            ? inner
            : createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: options.worktree ?? new GitWorktreeIsolationAdapter(), hooks, diagnostics });
        // A runtime that runs agent tasks elsewhere (BullMQ workers) takes the jobs instead.
        const shared = container.get(AgentTaskManagerToken, { optional: true });
        if (shared) return new SubagentManager({ backgroundTaskManager: shared, admit: (request) => refuseScoped(scopes, request) });
        // The watchdogs' time source is fixed when the manager is built (timers set on one
        // clock are cleared on the same one).
        const clock = container.get(Clock, { optional: true });
        const own = new SubagentManager({ ...options, runner, ...(clock ? { clock } : {}), admit: (request) => holdScope(scopes, request) });
        ownsManager.add(own);
        return own;
      };
      bind(AgentDefinitions).toConstantValue(registry);
      if (options.approvalHandler) bind(ApprovalHandler).toConstantValue(approvals.wrap(options.approvalHandler));
      // Another plugin's approver: wrapped wherever it is resolved (any plugin order), so
      // plugins that ask it (permissions, hooks) route subagent approvals through the job.
      else decorate(ApprovalHandler, (handler) => approvals.wrap(handler));
      bind(SubagentLauncher)
        .toResolvedValue((resolved: SubagentManager) => createSubagentLauncher(() => resolved, (sessionId) => approvals.isChildSession(sessionId)), [SubagentManagerToken])
        .inSingletonScope();
      // Lazy: resolving the contributions (kernel checks, a session's first service lookup) must
      // not build the manager; the launcher is looked up when a session launches.
      bind(SessionServiceFactoryContribution)
        .toDynamicValue((container) => sessionLaunchers(() => container.get(SubagentLauncher)) as SessionServiceFactory)
        .inSingletonScope();
      bind(SubagentManagerToken)
        .toDynamicValue((container) => build(container))
        .inSingletonScope()
        // A shared manager belongs to the runtime that bound it; only an own one is shut down here.
        .onDeactivation((manager) => (ownsManager.has(manager) ? manager.getBackgroundTaskManager().shutdown('kernel shutdown') : undefined));
      // This kernel's subscriptions to agent definition sources.
      let subscriptions: Array<() => void> = [];
      return {
        // Found definitions (bundle plugins' agents): below the rest, read again when a source
        // changes, so `/reload-plugins` adds and drops them for jobs started afterwards.
        boot({ getAll }) {
          const sources = getAll(AgentDefinitionSourceContribution);
          const readSources = (): void => registry.setSourced(sources.flatMap((source) => source.agents()));
          readSources();
          subscriptions = sources.flatMap((source) => (source.onChange ? [source.onChange(readSources)] : []));
        },
        shutdown() {
          for (const stop of subscriptions) stop();
          subscriptions = [];
        },
      };
    },
    boot({ get, getAll }) {
      const registry = get(AgentDefinitions);
      if (options.discover !== false) {
        const found = discoverAgentDefinitions({
          cwd: options.cwd ?? process.cwd(),
          ...(options.home ? { home: options.home } : {}),
          ...(options.readDefinition ? { readDefinition: options.readDefinition } : {}),
          ...(options.settingSources === undefined ? {} : { sources: options.settingSources.filter((source): source is 'project' | 'user' => source !== 'local') }),
        });
        for (const definition of found.definitions) registry.add(definition);
        if (options.onDiagnostics) options.onDiagnostics(found.diagnostics);
        else {
          const diagnostics = get(Diagnostics);
          for (const diagnostic of found.diagnostics.filter((d) => d.severity === 'error')) {
            diagnostics.report({ ...diagnosticReport(diagnostic, 'TESSERA_AGENT_DEFINITION', PLUGIN_NAME), severity: 'warning', message: `Agent definition skipped: ${diagnostic.message}` });
          }
        }
      }
      // Contributed definitions (bundle plugins, presets), then the options' own, which win.
      for (const definition of getAll(AgentDefinitionContribution)) registry.add(definition);
      for (const definition of options.definitions ?? []) registry.add(definition);
    },
  });
}
