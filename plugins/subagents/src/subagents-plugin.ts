import {
  AgentDefinitionContribution,
  ApprovalHandler,
  Clock,
  createToken,
  Diagnostics,
  diagnosticReport,
  Provider,
  SubagentLauncher,
  ToolContribution,
  type AgentDefinition,
  type Diagnostic,
  type Tool,
} from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
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

/**
 * Subagents for a kernel: a `SubagentManager` whose jobs run as in-process child sessions
 * (kernel provider, tools, hooks), optionally in git worktrees. Agent definitions are the
 * built-ins plus `.md` files discovered at boot.
 */
export function subagents(options: SubagentsPluginOptions = {}): Plugin {
  return definePlugin({
    name: 'subagents',
    provides: [SubagentManagerToken, AgentDefinitions, SubagentLauncher, ...(options.approvalHandler ? [ApprovalHandler] : [])],
    optional: [Provider, Clock, ToolContribution, AgentDefinitionContribution, Diagnostics, ...(options.approvalHandler ? [] : [ApprovalHandler])],
    register({ bind, decorate, hooks }) {
      // Per kernel: its registry, its approval router and (on first use) its manager.
      const registry = new AgentDefinitionRegistry();
      const approvals = new SubagentApprovalRouter();
      const build = (provider: Provider | undefined, clock: Clock | undefined, tools: Tool[] | undefined): SubagentManager => {
        const inner = createInProcessSubagentRunner({
          ...options,
          ...(provider ? { provider } : {}),
          ...(clock ? { clock } : {}),
          hooks,
          tools: tools ?? [],
          definitions: registry,
          approvals,
        });
        const runner =
          options.worktree === false
            ? inner
            : createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: options.worktree ?? new GitWorktreeIsolationAdapter(), hooks });
        return new SubagentManager({ ...options, runner, ...(clock ? { clock } : {}) });
      };
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
        .inSingletonScope()
        .onDeactivation((manager) => manager.getBackgroundTaskManager().shutdown('kernel shutdown'));
    },
    boot({ get, getAll }) {
      const registry = get(AgentDefinitions);
      if (options.discover !== false) {
        const found = discoverAgentDefinitions({
          cwd: options.cwd ?? process.cwd(),
          ...(options.home ? { home: options.home } : {}),
          ...(options.readDefinition ? { readDefinition: options.readDefinition } : {}),
        });
        for (const definition of found.definitions) registry.add(definition);
        if (options.onDiagnostics) options.onDiagnostics(found.diagnostics);
        else {
          const diagnostics = get(Diagnostics);
          for (const diagnostic of found.diagnostics.filter((d) => d.severity === 'error')) {
            diagnostics.report({ ...diagnosticReport(diagnostic, 'TESSERA_AGENT_DEFINITION', 'subagents'), severity: 'warning', message: `Agent definition skipped: ${diagnostic.message}` });
          }
        }
      }
      // Contributed definitions (bundle plugins, presets), then the options' own, which win.
      for (const definition of getAll(AgentDefinitionContribution)) registry.add(definition);
      for (const definition of options.definitions ?? []) registry.add(definition);
    },
  });
}
