import {
  ApprovalHandler,
  Clock,
  createToken,
  Provider,
  SubagentLauncher,
  ToolContribution,
  type AgentDefinition,
  type Diagnostic,
  type Tool,
} from '@tessera/contracts';
import { definePlugin, type Plugin, type TesseraHooks } from '@tessera/kernel';
import { discoverAgentDefinitions, type TAgentDefinitionReader } from './agent-definition-discovery.js';
import { AgentDefinitionRegistry } from './agent-definitions.js';
import { GitWorktreeIsolationAdapter } from './git-worktree-isolation-adapter.js';
import { createInProcessSubagentRunner, type IInProcessSubagentRunnerDeps } from './in-process-subagent-runner.js';
import { SubagentApprovalRouter } from './subagent-approval-router.js';
import { createSubagentLauncher } from './subagent-launcher.js';
import { SubagentManager, type SubagentManagerOptions } from './subagent-manager.js';
import { createWorktreeSubagentRunner, type ISubagentWorktreeAdapter } from './worktree-subagent-runner.js';

export const SubagentManagerToken = createToken<SubagentManager>('SubagentManager');
export const AgentDefinitions = createToken<AgentDefinitionRegistry>('AgentDefinitions');

export interface SubagentsPluginOptions
  extends Pick<SubagentManagerOptions, 'maxConcurrent' | 'maxDepth' | 'watchdog' | 'eventSink' | 'onError'>,
    Pick<IInProcessSubagentRunnerDeps, 'logsDir' | 'modelAliases' | 'parentModel' | 'permissionMode' | 'getParentSession' | 'systemPromptSuffix'> {
  /** Project directory searched for `.md` agents (default `process.cwd()`). */
  cwd?: string;
  home?: string;
  /** Set false to use only built-ins and `definitions`. */
  discover?: boolean;
  /** Extra definitions; they win over discovered ones. */
  definitions?: readonly AgentDefinition[];
  readDefinition?: TAgentDefinitionReader;
  /** Worktree isolation adapter (default: the git CLI adapter); `false` refuses isolated jobs. */
  worktree?: ISubagentWorktreeAdapter | false;
  /** Receives discovery diagnostics (bad agent files). Default: a process warning per error. */
  onDiagnostics?: (diagnostics: Diagnostic[]) => void;
  /**
   * The parent's approver. When given, this plugin PROVIDES `ApprovalHandler` (so no other
   * plugin may) and binds a router that sends subagent approvals through their job. Without
   * it, an `ApprovalHandler` bound by another plugin is wrapped at boot (see the docs for the
   * plugin order this needs).
   */
  approvalHandler?: ApprovalHandler;
}

/**
 * Subagents for a kernel: a `SubagentManager` whose jobs run as in-process child sessions
 * (kernel provider, tools, hooks), optionally in git worktrees. Agent definitions are the
 * built-ins plus `.md` files discovered at boot.
 */
export function subagents(options: SubagentsPluginOptions = {}): Plugin {
  const registry = new AgentDefinitionRegistry();
  const approvals = new SubagentApprovalRouter();
  let manager: SubagentManager | undefined;
  let hooks: TesseraHooks | undefined;

  const build = (provider: Provider | undefined, clock: Clock | undefined, tools: Tool[] | undefined): SubagentManager => {
    if (manager) return manager;
    const inner = createInProcessSubagentRunner({
      ...options,
      ...(provider ? { provider } : {}),
      ...(clock ? { clock } : {}),
      ...(hooks ? { hooks } : {}),
      tools: tools ?? [],
      definitions: registry,
      approvals,
    });
    const runner =
      options.worktree === false
        ? inner
        : createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: options.worktree ?? new GitWorktreeIsolationAdapter(), ...(hooks ? { hooks } : {}) });
    manager = new SubagentManager({ ...options, runner, ...(clock ? { clock } : {}) });
    return manager;
  };

  return definePlugin({
    name: 'subagents',
    provides: [SubagentManagerToken, AgentDefinitions, SubagentLauncher, ...(options.approvalHandler ? [ApprovalHandler] : [])],
    register({ bind, decorate, hooks: kernelHooks }) {
      hooks = kernelHooks;
      bind(AgentDefinitions).toConstantValue(registry);
      if (options.approvalHandler) bind(ApprovalHandler).toConstantValue(approvals.wrap(options.approvalHandler));
      // Another plugin's approver: wrapped wherever it is resolved (any plugin order), so
      // plugins that ask it (permissions, hooks) route subagent approvals through the job.
      else decorate(ApprovalHandler, (handler) => approvals.wrap(handler));
      bind(SubagentLauncher)
        .toResolvedValue((resolved: SubagentManager) => createSubagentLauncher(() => resolved, (sessionId) => approvals.isChildSession(sessionId)), [SubagentManagerToken])
        .inSingletonScope();
      bind(SubagentManagerToken)
        .toResolvedValue(
          (provider: Provider | undefined, clock: Clock | undefined, tools: Tool[] | undefined) => build(provider, clock, tools),
          [
            { serviceIdentifier: Provider, optional: true },
            { serviceIdentifier: Clock, optional: true },
            { serviceIdentifier: ToolContribution, isMultiple: true, optional: true },
          ],
        )
        .inSingletonScope();
    },
    boot() {
      if (options.discover !== false) {
        const found = discoverAgentDefinitions({
          cwd: options.cwd ?? process.cwd(),
          ...(options.home ? { home: options.home } : {}),
          ...(options.readDefinition ? { readDefinition: options.readDefinition } : {}),
        });
        for (const definition of found.definitions) registry.add(definition);
        if (options.onDiagnostics) options.onDiagnostics(found.diagnostics);
        else {
          for (const diagnostic of found.diagnostics.filter((d) => d.severity === 'error')) {
            process.emitWarning(`Agent definition skipped: ${diagnostic.file}${diagnostic.line ? `:${diagnostic.line}` : ''}: ${diagnostic.message}`, { code: 'TESSERA_AGENT_DEFINITION' });
          }
        }
      }
      for (const definition of options.definitions ?? []) registry.add(definition);
    },
    async shutdown() {
      await manager?.getBackgroundTaskManager().shutdown('kernel shutdown');
    },
  });
}
