import {
  noSessionServices,
  Clock,
  describeError,
  Provider,
  ToolContribution,
  type ISession,
  type PermissionMode,
  type SessionLogData,
  type SessionLogger,
  type ServiceOverride,
  type SessionServices,
  type SettingSource,
  type Tool,
} from '@tessera/contracts';
import { ContainerSessionServices, createHooks, removeToolsByName, replaceToolsByName, Session, type Kernel, type KernelSessionScope, type TesseraHooks } from '@tessera/kernel';
import { BackgroundTaskError } from '@tessera/plugin-background';
import { assembleSubagentPrompt, contextForSubagent, loadContext } from '@tessera/formats';
import { AgentDefinitionRegistry, AGENT_SPAWNING_TOOLS, filterSubagentTools } from './agent-definitions.js';
import type { SubagentApprovalRouter } from './subagent-approval-router.js';
import { subagentSessionEvents } from './subagent-session-events.js';
import { SubagentTranscriptLogger } from './subagent-transcript-logger.js';
import type { ISubagentJobHandle, ISubagentJobResult, ISubagentJobStart, ISubagentRunner, ISubagentSpawnRequest } from './types.js';

export interface IInProcessSubagentRunnerDeps {
  /** Supplies provider, contributed tools, hooks and clock when those are not given. */
  kernel?: Kernel;
  /**
   * Makes the services a job's child session sees (`session.services`), once per job; the
   * subagents plugin passes a view of its kernel's container. The job's provider, clock and
   * tools are looked up there when not given, so a rebind reaches jobs started afterwards.
   * Default with `kernel`: a `ContainerSessionServices` over its container. It must answer
   * `overrides` (the parent session's, see `parentScope`) before the container.
   */
  services?: (overrides?: readonly ServiceOverride[]) => SessionServices;
  /**
   * The tool replacements and removals and the service overrides of the session that starts a
   * job (a sandboxed session's Bash, Read, Write, Edit and `SandboxPaths`, without BashOutput and
   * KillShell): the job's child session gets the same, so a subagent never leaves its parent's
   * sandbox. Default with `kernel`: `kernel.sessionScope` of `request.parentSession` (the
   * session itself), else of `request.parentSessionId`.
   */
  parentScope?: (request: ISubagentSpawnRequest) => KernelSessionScope | undefined;
  provider?: Provider;
  /** The parent's tools, before filtering (default: the `ToolContribution` tools, resolved per job). */
  tools?: readonly Tool[] | (() => readonly Tool[]);
  definitions?: AgentDefinitionRegistry;
  hooks?: TesseraHooks;
  clock?: Clock;
  /** When set, transcripts go to `{logsDir}/{parentSessionId}/subagents/{agentId}.jsonl`. */
  logsDir?: string;
  /** Model used when neither the request nor the definition picks one. */
  parentModel?: string;
  /** `sonnet` → a full model id, for the provider in use. Unmapped shortcuts inherit the parent model. */
  modelAliases?: Readonly<Record<string, string>>;
  permissionMode?: PermissionMode;
  /** The parent session, for `subagentStart` / `subagentStop` contexts. */
  getParentSession?: (parentSessionId: string) => ISession | undefined;
  /** Tool names removed from every subagent (default `Agent`, `Task`). */
  agentTools?: readonly string[];
  /** Appended to every agent's system prompt, after the framework suffix. */
  systemPromptSuffix?: string;
  /**
   * The parent context's CLAUDE.md / AGENTS.md files (found from the request's `cwd`, as a
   * session's system prompt finds them) go into each agent's system prompt (default true).
   */
  contextFiles?: boolean;
  /** Home directory for the user-level context files (default `os.homedir()`). */
  home?: string;
  /**
   * Claude Code's `settingSources`: only these sources' context files reach an agent's prompt
   * (`user` ~/.claude/CLAUDE.md, `project` AGENTS.md / CLAUDE.md, `local` CLAUDE.local.md).
   * Default: all of them.
   */
  settingSources?: readonly SettingSource[];
  /** Also receives the child session's log events (next to the transcript). */
  sessionLogger?: SessionLogger;
  /**
   * Where the child's approval requests are recognised (the subagents plugin binds
   * `approvals.wrap(...)` as the `ApprovalHandler`), so they move the job through
   * `waiting_permission`.
   */
  approvals?: SubagentApprovalRouter;
}

const MODEL_SHORTCUTS = new Set(['sonnet', 'opus', 'haiku', 'fable']);

/** A stand-in for hook contexts when the parent session object is not reachable (the kernel's services, when known). */
function parentView(parentSessionId: string, cwd: string, services: SessionServices | undefined): ISession {
  return { sessionId: parentSessionId, cwd, services: services ?? noSessionServices, getPermissionMode: () => 'default', getHistory: () => [] };
}

/** Logs to the transcript and to an extra logger; one failing never silences the other. */
function fanOut(loggers: SessionLogger[]): SessionLogger | undefined {
  if (loggers.length <= 1) return loggers[0];
  return {
    log: (sessionId: string, event: string, data: SessionLogData) => {
      for (const logger of loggers) logger.log(sessionId, event, data);
    },
    flush: async () => {
      await Promise.all(loggers.map((logger) => logger.flush?.()));
    },
  };
}

/**
 * Runs each job as an isolated child `Session` in this process: the agent definition's
 * system prompt and model, the parent's tools filtered by the definition (never an
 * agent-spawning tool), the kernel's hooks (so permissions and hook plugins still apply),
 * and a JSONL transcript. Fires `subagentStart` / `subagentStop`.
 */
export function createInProcessSubagentRunner(deps: IInProcessSubagentRunnerDeps): ISubagentRunner {
  const definitions = deps.definitions ?? new AgentDefinitionRegistry();
  const hooks = deps.hooks ?? deps.kernel?.hooks;
  // As in Claude Code, a subagent's end is SubagentStop, not Stop: the child gets an untapped
  // `stop` hook, so the parent's Stop taps (hook runner, an agent Stop hook) never run for it.
  const childHooks = hooks ? Object.freeze({ ...hooks, stop: createHooks().stop }) : undefined;
  const servicesFor = (overrides: readonly ServiceOverride[] | undefined): SessionServices | undefined =>
    deps.services ? deps.services(overrides) : deps.kernel ? new ContainerSessionServices(deps.kernel.container, undefined, overrides) : undefined;
  const parentScope = deps.parentScope ?? (deps.kernel ? (request: ISubagentSpawnRequest) => deps.kernel!.sessionScope(request.parentSession ?? request.parentSessionId) : undefined);
  const resolveTools = (services: SessionServices | undefined): readonly Tool[] => {
    if (typeof deps.tools === 'function') return deps.tools();
    return deps.tools ?? services?.getAll(ToolContribution) ?? [];
  };
  const resolveModel = (requested: string | undefined, defined: string | undefined): string | undefined => {
    const model = requested ?? (defined === 'inherit' ? undefined : defined);
    if (model === undefined) return deps.parentModel;
    if (deps.modelAliases?.[model]) return deps.modelAliases[model];
    return MODEL_SHORTCUTS.has(model) ? deps.parentModel : model;
  };

  return {
    start({ jobId, request, emit }: ISubagentJobStart): ISubagentJobHandle {
      const definition = definitions.require(request.type);
      // The parent's sandbox (tools and the services that describe it) goes with the job.
      const scope = parentScope?.(request);
      // Looked up per job: a Provider, Clock or tool rebound after createKernel reaches jobs started afterwards.
      const services = servicesFor(scope?.serviceOverrides);
      const provider = deps.provider ?? services?.getOptional(Provider);
      if (!provider) {
        throw new BackgroundTaskError('validation', 'createInProcessSubagentRunner needs a provider: pass `provider` or a `kernel` with a provider plugin.', { code: 'subagent_no_provider' });
      }
      const transcript = deps.logsDir ? new SubagentTranscriptLogger(deps.logsDir, request.parentSessionId, jobId) : undefined;
      const logger = fanOut([transcript, deps.sessionLogger].filter((item): item is SessionLogger => item !== undefined));
      const cwd = request.worktreePath ?? request.cwd;
      const model = resolveModel(request.model, definition.model);
      // Agent body, the parent's CLAUDE.md and AGENTS.md, then the framework suffix (a forked skill's is the fork worker one).
      const context = deps.contextFiles === false ? {} : contextForSubagent(loadContext({ cwd: request.cwd, ...(deps.home === undefined ? {} : { home: deps.home }), ...(deps.settingSources === undefined ? {} : { scopes: deps.settingSources }) }));
      const assembled = assembleSubagentPrompt({ agentBody: definition.systemPrompt, ...context, ...(request.forkWorker ? { isForkWorker: true } : {}) });
      const systemMessage = deps.systemPromptSuffix ? `${assembled}\n\n${deps.systemPromptSuffix}` : assembled;
      const clock = deps.clock ?? services?.getOptional(Clock);
      const session = new Session({
        provider,
        ...(services ? { services } : {}),
        tools: filterSubagentTools(
          removeToolsByName(replaceToolsByName(resolveTools(services), scope?.replaceTools), scope?.removeTools),
          definition,
          deps.agentTools ?? AGENT_SPAWNING_TOOLS,
          request.allowedTools,
        ),
        systemMessage,
        sessionId: jobId,
        cwd,
        ...(model ? { model } : {}),
        ...(definition.maxTurns ? { maxTurns: definition.maxTurns } : {}),
        ...(childHooks ? { hooks: childHooks } : {}),
        ...(clock ? { clock } : {}),
        ...(logger ? { sessionLogger: logger } : {}),
        permissionMode: definition.permissionMode ?? deps.permissionMode ?? 'default',
      });
      // Deltas and tool events reach the manager and the transcript through the session's event stream.
      const unsubscribe = session.subscribe(subagentSessionEvents(jobId, transcript, emit));
      const parent = deps.getParentSession?.(request.parentSessionId) ?? parentView(request.parentSessionId, request.cwd, services);
      const controller = new AbortController();
      const hookContext = { session: parent, agentId: jobId, agentType: definition.name };
      const unregister = emit && deps.approvals ? deps.approvals.register(jobId, emit) : undefined;
      // Follow-up prompts (`send`) queue up and run, in order, once the current turn ends.
      const followUps: string[] = [];
      let accepting = true;

      const result = (async (): Promise<ISubagentJobResult> => {
        let output: string | undefined;
        try {
          await hooks?.subagentStart.promise(hookContext);
          transcript?.log(jobId, 'prompt', { agentType: definition.name, prompt: request.prompt, model: model ?? null });
          output = await session.run(request.prompt, { signal: controller.signal });
          for (let next = followUps.shift(); next !== undefined; next = followUps.shift()) {
            transcript?.log(jobId, 'prompt', { followUp: true, prompt: next });
            output = await session.run(next, { signal: controller.signal });
          }
          accepting = false;
          transcript?.log(jobId, 'final_output', { output });
          return { output, metadata: { agentType: definition.name, ...(model ? { model } : {}) } };
        } catch (error) {
          transcript?.log(jobId, 'error', { error: describeError(error) });
          throw error;
        } finally {
          accepting = false;
          await hooks?.subagentStop
            .promise({ ...hookContext, ...(output === undefined ? {} : { result: output }) })
            .catch((error: unknown) => transcript?.log(jobId, 'error', { phase: 'subagentStop', error: describeError(error) }));
          unregister?.();
          await session.shutdown({ reason: 'other' });
          unsubscribe();
          await transcript?.flush().catch(() => undefined);
        }
      })();
      result.catch(() => undefined);

      return {
        jobId,
        ...(transcript ? { transcriptPath: transcript.path } : {}),
        result,
        cancel: async () => {
          controller.abort();
          await result.catch(() => undefined);
        },
        send: async (prompt: string) => {
          if (!accepting) {
            throw new BackgroundTaskError('validation', `Subagent ${jobId} has finished its work and takes no more input; spawn a new one.`, {
              code: 'subagent_finished',
            });
          }
          followUps.push(prompt);
        },
      };
    },
  };
}
