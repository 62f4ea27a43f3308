import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  describeError,
  parsePermissionMode,
  PERMISSION_MODES,
  type AgentDefinition,
  type ApprovalAnswer,
  type ApprovalHandler,
  type ApprovalRequest,
  type HookEventName,
  type HooksConfig,
} from '@tessera/contracts';
import type { InteractiveSession, Kernel, Session } from '@tessera/kernel';
import type { CliFlags } from '../args.js';
import { CliUsageError, splitToolList } from '../args.js';
import { addAgentDefinitions, hostListings, mcpServerStates, type HostListings } from '../host-adapters.js';
import { parseAgentsFlag } from '../inline-agents.js';
import type { CliIO } from '../io.js';
import { resolveModelAlias } from '../provider-selection.js';
import type { CliSettings } from '../settings.js';
import { TESSERA_VERSION } from '../version.js';
import { ControlRequestError, isRecord, type ControlChannel } from './control-channel.js';
import type { UserQueue } from './user-queue.js';

/** How long a `can_use_tool` ask may wait for the host before it counts as a refusal. */
const DEFAULT_PERMISSION_TIMEOUT_MS = 5 * 60_000;

/**
 * The host side of headless mode: the SDK's hooks (registered in `initialize`) as callback
 * hooks, permission asks (`can_use_tool` with `--permission-prompt-tool stdio`, a refusal naming
 * the rule to add otherwise), and the control requests the host sends.
 */
export class HostBridge {
  private session: Session | undefined;
  kernel: Kernel | undefined;

  constructor(
    private readonly control: ControlChannel,
    private readonly initialize: Record<string, unknown> | undefined,
    private readonly flags: CliFlags,
    private readonly io: CliIO,
  ) {}

  attach(session: Session): void {
    this.session = session;
  }

  /** Why the first `initialize`'s `agents` were refused (its answer is then this error). */
  private agentsError: string | undefined;

  /**
   * `initialize.agents` (the SDK's `agents` option, `{ name: { description, prompt, tools?,
   * model? } }`), read as `--agents` is: subagents of this run, composed before the session
   * starts so `system/init` lists them. A malformed definition is refused as a whole (named in
   * the `initialize` error answer, field and all); the rest of `initialize` still applies.
   */
  agents(): AgentDefinition[] {
    const read = this.readAgents(this.initialize?.agents);
    if ('error' in read) {
      this.agentsError = `${read.error} None of its agents were added; fix the definition and start a new query.`;
      this.io.stderr(`${this.agentsError}\n`);
      return [];
    }
    return read.definitions;
  }

  /** An `initialize` request's `agents`, checked as `--agents` is (warnings on stderr), or why they were refused. */
  private readAgents(agents: unknown): { definitions: AgentDefinition[] } | { error: string } {
    if (agents === undefined) return { definitions: [] };
    try {
      const { definitions, warnings } = parseAgentsFlag([JSON.stringify(agents)]);
      for (const warning of warnings) this.io.stderr(`${warning.replace('--agents:', 'initialize: agents:')}\n`);
      return { definitions };
    } catch (error) {
      if (!(error instanceof CliUsageError)) throw error;
      return { error: error.message.replace(/^Error: --agents/, 'initialize: agents') };
    }
  }

  /**
   * A further `initialize` once the session runs (the 2026 SDK's `reinitialize()`; Claude Code
   * takes it): its `agents` are checked as the first one's and added to the session's subagents
   * (a name already there is replaced; `--agents` and earlier ones stay), for the turns after
   * it. A bad definition is the same error answer and adds none. Its hooks and system prompt
   * are not read again: they are part of the composition. The answers, error answers included,
   * go out in the order the requests came.
   */
  private reinitialize(requestId: string, request: Record<string, unknown>, interactive: InteractiveSession): void {
    const read = this.readAgents(request.agents);
    if ('error' in read) {
      const message = `${read.error} None of its agents were added; fix the definition and send initialize again.`;
      this.io.stderr(`${message}\n`);
      this.answerInOrder(requestId, () => this.control.respondError(requestId, message, 'invalid_request'));
      return;
    }
    if (read.definitions.length === 0) {
      this.answerInOrder(requestId, () => this.respondInitialize(requestId, interactive));
      return;
    }
    // Added before this returns: a user line after the request already sees them.
    const kernel = this.kernel;
    if (!kernel || !addAgentDefinitions(kernel, read.definitions)) {
      this.answerInOrder(requestId, () => this.control.respondError(requestId, 'initialize: agents cannot be added: this composition has no subagents plugin.', 'invalid_request'));
      return;
    }
    this.answerInOrder(requestId, async () => {
      this.listings = await hostListings(kernel, interactive);
      this.respondInitialize(requestId, interactive);
    });
  }

  /** The answers to later `initialize` requests, the last one queued. */
  private initializeAnswers: Promise<void> = Promise.resolve();

  /**
   * Resolves once every later `initialize` received so far has been answered (never rejects):
   * an input that ends right after one must not end the process before its answer is out.
   */
  answered(): Promise<void> {
    return this.initializeAnswers;
  }

  /**
   * Answers a later `initialize` (its error answer too) once the earlier ones are answered, or
   * with an error answer if `answer` throws. One at a time: a slow listing never replaces a
   * newer one. A request's agents are added when it arrives, so an answer lists at least those
   * of its own and earlier requests.
   */
  private answerInOrder(requestId: string, answer: () => void | Promise<void>): void {
    this.initializeAnswers = this.initializeAnswers
      .then(answer)
      .catch((error: unknown) => this.control.respondError(requestId, describeError(error)))
      // An answer that could not be written (stdout closed) must not stop the ones after it.
      .catch(() => undefined);
  }

  /** `initialize.hooks` → one callback hook per `hookCallbackIds` entry, asking the host. */
  hookConfigs(): Array<{ config: HooksConfig; source: { file: string } }> {
    const hooks = this.initialize?.hooks;
    if (!isRecord(hooks)) return [];
    const config: HooksConfig = {};
    for (const [event, groups] of Object.entries(hooks)) {
      if (!Array.isArray(groups)) continue;
      config[event as HookEventName] = groups.filter(isRecord).map((group) => ({
        ...(typeof group.matcher === 'string' ? { matcher: group.matcher } : {}),
        hooks: (Array.isArray(group.hookCallbackIds) ? group.hookCallbackIds : [])
          .filter((id): id is string => typeof id === 'string')
          .map((id) => ({
            type: 'callback' as const,
            id,
            ...(typeof group.timeout === 'number' && group.timeout > 0 ? { timeout: group.timeout } : {}),
            callback: (input: Record<string, unknown>, signal: AbortSignal) =>
              this.control.request({ subtype: 'hook_callback', callback_id: id, input: this.hookInput(event, input), tool_use_id: input.tool_use_id ?? null }, { signal }),
          })),
      }));
    }
    return [{ config, source: { file: 'Agent SDK hooks (initialize)' } }];
  }

  /** The hook input as Claude Code gives it to SDK callbacks. */
  private hookInput(event: string, input: Record<string, unknown>): Record<string, unknown> {
    return { hook_event_name: event, ...input, permission_mode: this.session?.getPermissionMode() ?? input.permission_mode };
  }

  approvalHandler(): ApprovalHandler {
    const viaHost = this.flags.permissionPromptTool === 'stdio' && this.flags.inputFormat === 'stream-json';
    const timeoutMs = Number(this.io.env.TESSERA_PERMISSION_PROMPT_TIMEOUT_MS) || DEFAULT_PERMISSION_TIMEOUT_MS;
    return {
      requestApproval: async (request: ApprovalRequest): Promise<ApprovalAnswer> => {
        if (!viaHost) return { behavior: 'deny', message: refusalMessage(request, this.flags.permissionPromptTool) };
        // The enforcer joins several suggested rules with ", " (e.g. for `pwd && ls`).
        const suggested = request.suggestedRule === undefined ? [] : splitToolList(request.suggestedRule);
        try {
          const answer = await this.control.request(
            {
              subtype: 'can_use_tool',
              tool_name: request.toolName,
              input: isRecord(request.input) ? request.input : {},
              tool_use_id: request.toolCallId,
              permission_suggestions: suggested.map(suggestion),
            },
            { timeoutMs, signal: request.signal },
          );
          if (answer.behavior === 'allow') {
            const remember = this.applyPermissionUpdates(answer.updatedPermissions, suggested);
            return { behavior: 'allow', ...(isRecord(answer.updatedInput) ? { updatedInput: answer.updatedInput } : {}), ...(remember ? { remember: true } : {}) };
          }
          const message = typeof answer.message === 'string' && answer.message !== '' ? answer.message : `The host denied ${request.toolName}.`;
          if (answer.interrupt === true) setImmediate(() => this.session?.abort());
          return { behavior: 'deny', message, ...(answer.interrupt === true ? { interrupt: true } : {}) };
        } catch (error) {
          const why = error instanceof ControlRequestError && error.reason === 'timeout' ? `the host did not answer the permission request within ${Math.round(timeoutMs / 1000)} s` : describeError(error);
          return { behavior: 'deny', message: `${request.toolName} was not approved: ${why}.` };
        }
      },
    };
  }

  /**
   * The host's `updatedPermissions` on an allow. Tessera can remember only the rules it
   * suggested, so it does when the host adds exactly those as allow rules; `setMode` changes the
   * session's mode. Anything else (deny rules, other destinations) is reported and not applied.
   */
  private applyPermissionUpdates(updates: unknown, suggested: readonly string[]): boolean {
    if (!Array.isArray(updates)) return false;
    let remember = false;
    for (const update of updates) {
      if (!isRecord(update)) continue;
      if (update.type === 'setMode' && typeof update.mode === 'string') {
        const mode = parsePermissionMode(update.mode);
        // A mode the session refuses (bypassPermissions without the opt-in flag) is not applied.
        if (mode && this.session?.allowsPermissionMode(mode)) this.session.setPermissionMode(mode);
        continue;
      }
      const rules = Array.isArray(update.rules) ? update.rules.filter(isRecord).map((rule) => (typeof rule.ruleContent === 'string' ? `${String(rule.toolName)}(${rule.ruleContent})` : String(rule.toolName))) : [];
      if (update.type === 'addRules' && update.behavior === 'allow' && rules.length > 0 && rules.every((rule) => suggested.includes(rule))) {
        remember = true;
        continue;
      }
      this.io.stderr(`warning: the host's permission update ${JSON.stringify(update)} is not supported here and was not applied\n`);
    }
    return remember;
  }

  /** `--system-prompt[-file]` / `--append-system-prompt[-file]`, or what `initialize` carries. */
  systemPromptOptions(settings: CliSettings): { systemPrompt?: string; appendSystemPrompt?: string } {
    const init = this.initialize;
    const fromInit = Array.isArray(init?.systemPrompt) ? (init.systemPrompt as unknown[]).filter((part): part is string => typeof part === 'string').join('\n') : typeof init?.systemPrompt === 'string' ? init.systemPrompt : undefined;
    const system = this.flags.systemPrompt ?? readFlagFile(this.flags.systemPromptFile, settings.cwd) ?? fromInit;
    const append = this.flags.appendSystemPrompt ?? readFlagFile(this.flags.appendSystemPromptFile, settings.cwd) ?? (typeof init?.appendSystemPrompt === 'string' ? init.appendSystemPrompt : undefined);
    if (system !== undefined) return { systemPrompt: append === undefined ? system : `${system}\n\n${append}` };
    return append === undefined ? {} : { appendSystemPrompt: append };
  }

  /** What the session offers (commands incl. skills and plugin commands, agents), once composed. */
  listings: HostListings | undefined;

  /** The answer to the first `initialize` (read before the session was composed). */
  answerInitialize(requestId: string, interactive: InteractiveSession, listings = this.listings): void {
    this.listings = listings;
    if (this.agentsError !== undefined) {
      this.control.respondError(requestId, this.agentsError, 'invalid_request');
      return;
    }
    this.respondInitialize(requestId, interactive);
  }

  private respondInitialize(requestId: string, interactive: InteractiveSession): void {
    const { listings } = this;
    this.control.respond(requestId, {
      commands: listings?.commands ?? interactive.listCommands().map((command) => ({ name: command.name, description: command.description ?? '', argumentHint: command.argumentHint ?? '' })),
      agents: listings?.agents ?? [],
      output_style: 'default',
      available_output_styles: ['default'],
      models: [],
      account: {},
      claude_code_version: TESSERA_VERSION,
    });
  }

  /** A `control_request` from the host. Always answered: success, or an error saying why. */
  handleRequest(message: Record<string, unknown>, line: number, interactive: InteractiveSession, session: Session, queue: UserQueue): void {
    const requestId = typeof message.request_id === 'string' ? message.request_id : undefined;
    const request = isRecord(message.request) ? message.request : undefined;
    // A malformed request is answered when it can be (the host waits on its id), else reported by line.
    if (requestId === undefined) {
      this.io.stderr(`stdin line ${line}: a control_request needs a "request_id" (a string) and a "request" object; it was skipped.\n`);
      return;
    }
    if (request === undefined) {
      this.control.respondError(requestId, `stdin line ${line}: a control_request needs a "request" object with a "subtype"; nothing was done.`, 'invalid_request');
      return;
    }
    try {
      switch (request.subtype) {
        case 'initialize':
          this.reinitialize(requestId, request, interactive);
          return;
        case 'interrupt': {
          const cancelled = request.cancel_queued === true ? queue.clear() : [];
          interactive.abort();
          this.control.respond(requestId, request.cancel_queued === true ? { cancelled, still_queued: [] } : { still_queued: queue.snapshot() });
          return;
        }
        case 'set_permission_mode': {
          const mode = parsePermissionMode(request.mode);
          if (mode === undefined) {
            this.control.respondError(requestId, `Invalid permission mode ${JSON.stringify(request.mode)}; use one of ${PERMISSION_MODES.join(', ')}.`, 'invalid_request');
            return;
          }
          if (!session.allowsPermissionMode(mode)) {
            this.control.respondError(requestId, `Permission mode ${mode} is not allowed in this session: start tessera with --allow-dangerously-skip-permissions (or --dangerously-skip-permissions) to switch to it.`, 'invalid_request');
            return;
          }
          session.setPermissionMode(mode);
          this.control.respond(requestId, { mode });
          return;
        }
        case 'set_model':
          session.setModel(typeof request.model === 'string' ? resolveModelAlias(request.model) : undefined);
          this.control.respond(requestId, {});
          return;
        case 'get_context_usage': {
          const state = interactive.getContextState();
          this.control.respond(requestId, {
            categories: [{ name: 'Messages', tokens: state.usedTokens, color: 'purple' }],
            totalTokens: state.usedTokens,
            maxTokens: state.maxTokens,
            rawMaxTokens: state.maxTokens,
            percentage: state.usedPercentage,
            gridRows: [],
            model: session.getModel() ?? '',
            memoryFiles: [],
            mcpTools: [],
          });
          return;
        }
        case 'mcp_status':
          this.control.respond(requestId, {
            mcpServers: (this.kernel ? mcpServerStates(this.kernel) : []).map((server) => ({ name: server.name, status: server.status, ...(server.error ? { error: server.error } : {}), scope: server.scope, tools: server.toolNames.map((name) => ({ name })) })),
          });
          return;
        case 'set_max_thinking_tokens':
        case 'apply_flag_settings':
        case 'stop_task':
          this.control.respond(requestId, {});
          return;
        default:
          this.control.respondError(requestId, `Unsupported control request subtype: ${String(request.subtype)}`, 'unsupported_request');
      }
    } catch (error) {
      this.control.respondError(requestId, describeError(error));
    }
  }
}

function readFlagFile(path: string | undefined, cwd: string): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(resolve(cwd, path), 'utf8');
  } catch (error) {
    throw new CliUsageError(`Error: cannot read ${path}: ${describeError(error)}`);
  }
}

/** A suggested rule as the SDK's `PermissionUpdate`. */
function suggestion(rule: string): Record<string, unknown> {
  const match = /^([^(]+)(?:\(([\s\S]*)\))?$/.exec(rule);
  return {
    type: 'addRules',
    rules: [{ toolName: match?.[1] ?? rule, ...(match?.[2] === undefined ? {} : { ruleContent: match[2] }) }],
    behavior: 'allow',
    destination: 'session',
  };
}

/** Print mode has no one to ask: the call is refused, and the message says how to allow it. */
export function refusalMessage(request: ApprovalRequest, promptTool: string | undefined): string {
  const rule = request.suggestedRule ?? request.toolName;
  const why = promptTool === 'stdio' ? 'the host cannot be asked without --input-format stream-json' : 'print mode has no one to ask';
  return `Permission to use ${request.toolName} was denied: this call needs approval and ${why}. To allow it, add "${rule}" to permissions.allow in .claude/settings.json or .tessera/settings.json, or pass --allowedTools "${rule}".`;
}
