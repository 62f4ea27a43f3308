import {
  HookInventory,
  HooksConfigSourceContribution,
  type HookInventoryEntry,
  ApprovalHandler,
  Diagnostics,
  diagnosticReport,
  noSessionServices,
  processWarningDiagnostics,
  Provider,
  SandboxPaths,
  ShellDirectories,
  SubagentLauncher,
  TesseraError,
  describeError,
  type Diagnostic,
  type DiagnosticsReporter,
  type HooksConfig,
  type HooksSource,
  type ISession,
  type PostToolUseContext,
  type SessionServices,
  type ToolResult,
  copyWith,
} from '@tessera/contracts';
import { definePlugin, Stage, type Plugin } from '@tessera/kernel';
import { askForApproval, type HookApprovalOptions } from './ask-approval.js';
import type { HookRunResult } from './hook-outcome.js';
import { entriesFrom, HookRunner, type HookEntry, type HookRunnerOptions } from './hook-runner.js';
import { readHooksFile } from './parse-hooks-config.js';

export const HOOKS_PLUGIN_NAME = 'claude-hooks';

/** PreToolUse hooks tap just before `Stage.Guard` (the permission enforcer). */
export const PRE_TOOL_USE_STAGE = Stage.BeforeGuard;

export interface HooksPluginOptions extends Omit<HookRunnerOptions, 'provider' | 'services'>, Omit<HookApprovalOptions, 'approvalHandler'> {
  /** Parsed configurations with their source (settings layer or plugin). */
  configs?: ReadonlyArray<{ config: HooksConfig; source: HooksSource }>;
  /** Settings files or plugin hooks.json files to read at boot (a string is the file path). */
  files?: ReadonlyArray<string | HooksSource>;
  /** Provider for `prompt` hooks; default: the session's `Provider`. */
  provider?: HookRunnerOptions['provider'];
  /** Approver for `permissionDecision: "ask"`; default: the session's `ApprovalHandler`. */
  approvalHandler?: HookApprovalOptions['approvalHandler'];
  /**
   * Sees every run that matched at least one handler: notices, system messages, decisions.
   * Without it they go to the `Diagnostics` reporter: notices as `TESSERA_HOOK_NOTICE`
   * warnings; `systemMessage`s and `continue: false` stop reasons, which Claude Code shows
   * the user, as `TESSERA_HOOK_MESSAGE` warnings.
   */
  onHookResult?: (result: HookRunResult, session: ISession | undefined) => void;
  /** Problems found while reading `files`; by default they go to the `Diagnostics` reporter (`TESSERA_HOOKS_CONFIG`). */
  onDiagnostics?: (diagnostics: Diagnostic[]) => void;
}

/** A PreCompact hook refused compaction. */
export class CompactionBlockedByHookError extends TesseraError {
  constructor(reason: string) {
    super(`Compaction was blocked by a PreCompact hook: ${reason}`, { code: 'compaction_blocked', category: 'permission', recoverable: true, details: { reason } });
  }
}

/** What the model is told when a hook answered `continue: false` (its `stopReason` is for the user). */
const STOPPED_BY_HOOK = 'A hook stopped the agent ("continue": false). Do not call more tools; end your turn now.';

function appendFeedback(result: ToolResult, text: string): ToolResult {
  const output = typeof result.output === 'string' ? `${result.output}\n\n${text}` : [...result.output, { type: 'text' as const, text }];
  return copyWith(result, { output });
}

/** A configured hook as `/hooks` lists it. */
function inventoryEntry(entry: HookEntry): HookInventoryEntry {
  const handler = entry.handler as { type: string; command?: string; url?: string; prompt?: string; id?: string };
  const text = handler.command ?? handler.url ?? handler.prompt ?? handler.id ?? '';
  const summary = text.length > 120 ? `${text.slice(0, 119)}…` : text;
  return { event: entry.event, ...(entry.matcher === undefined ? {} : { matcher: entry.matcher }), type: handler.type, summary, file: entry.source.file, location: entry.location };
}

/** What one kernel's copy of the plugin holds: made in `register()`, completed in `boot()`. */
interface KernelState {
  readonly runner: HookRunner;
  /** The kernel's own lookups, for calls without a session or with one made outside the kernel. */
  services?: SessionServices;
  /** Stops listening to the hook configuration sources (at shutdown). */
  unsubscribe?: Array<() => void>;
}

function invalidOption(option: string, message: string): TesseraError {
  return new TesseraError(`hooksPlugin: ${message}`, {
    code: 'invalid_plugin_options',
    category: 'configuration',
    recoverable: false,
    details: { plugin: HOOKS_PLUGIN_NAME, option },
  });
}

function validate(options: HooksPluginOptions): void {
  (options.files ?? []).forEach((file, index) => {
    const path = typeof file === 'string' ? file : file?.file;
    if (typeof path !== 'string' || path === '') throw invalidOption('files', `files[${index}] must be a path or { file, pluginRoot? }.`);
  });
  (options.configs ?? []).forEach((entry, index) => {
    if (typeof entry?.config !== 'object' || entry.config === null || typeof entry.source?.file !== 'string') {
      throw invalidOption('configs', `configs[${index}] must be { config, source: { file } }.`);
    }
  });
}

/**
 * Runs Claude Code hooks (settings `hooks`, plugin hooks.json, and every
 * `HooksConfigSourceContribution`, re-read when a source changes) on the kernel's hooks.
 * PreToolUse taps just before the permission guard (`Stage.BeforeGuard`); other events at
 * `Stage.Default`.
 *
 * The factory only checks and keeps `options`. Each kernel's `register()` makes its own
 * `HookRunner`, and its `boot()` reads `files` into it. What the hooks use from other plugins
 * — `Provider`, `SubagentLauncher`, `ShellDirectories`, `SandboxPaths`, `ApprovalHandler`,
 * `Diagnostics` — is looked up per call in the session's services, unless given as an option.
 */
export function hooksPlugin(options: HooksPluginOptions = {}): Plugin {
  validate(options);
  return definePlugin({
    name: HOOKS_PLUGIN_NAME,
    provides: [HookInventory],
    optional: [Provider, SubagentLauncher, ShellDirectories, SandboxPaths, ApprovalHandler, Diagnostics, HooksConfigSourceContribution],
    register({ hooks, bind }) {
      // A session made outside the kernel (a subagent's child session, a stand-in) has no
      // services of its own; it and session-less events use the kernel's.
      const servicesOf = (session: ISession | undefined): SessionServices | undefined => {
        const own = session?.services as SessionServices | undefined;
        return own === undefined || own === noSessionServices ? state.services : own;
      };
      const diagnosticsOf = (session: ISession | undefined): DiagnosticsReporter =>
        servicesOf(session)?.getOptional(Diagnostics) ?? processWarningDiagnostics;
      const entries: HookEntry[] = (options.configs ?? []).flatMap(({ config, source }) => entriesFrom(config, source));
      // This kernel's state lives in this closure; the activation returned below completes it.
      const state: KernelState = { runner: new HookRunner(entries, { ...options, services: servicesOf }) };
      bind(HookInventory).toConstantValue({ list: () => state.runner.list().map(inventoryEntry) });
      const { runner } = state;
      // SessionStart output waits here until the session's first prompt.
      const pendingContext = new WeakMap<ISession, string[]>();
      // PreToolUse `additionalContext`, per tool call, until the call's result goes to the model.
      const toolContext = new WeakMap<ISession, Map<string, string[]>>();
      // Sessions whose current turn a hook stopped (`continue: false`); a new prompt clears it.
      const stopped = new WeakSet<ISession>();
      const report = (result: HookRunResult, session: ISession | undefined): void => {
        if (result.outcomes.length === 0) return;
        if (options.onHookResult) return options.onHookResult(result, session);
        const diagnostics = diagnosticsOf(session);
        for (const notice of result.notices) diagnostics.report({ severity: 'warning', code: 'TESSERA_HOOK_NOTICE', message: notice, source: HOOKS_PLUGIN_NAME });
        // Claude Code shows these to the user, not the model.
        const messages = [...result.systemMessages, ...(result.stop ? [`${result.event} hook stopped the agent: ${result.stop.reason}`] : [])];
        for (const message of messages) diagnostics.report({ severity: 'warning', code: 'TESSERA_HOOK_MESSAGE', message, source: HOOKS_PLUGIN_NAME });
      };
      const run = async (call: Parameters<HookRunner['run']>[0]): Promise<HookRunResult> => {
        const result = await runner.run(call);
        report(result, call.session);
        return result;
      };
      const name = (suffix: string) => ({ name: `${HOOKS_PLUGIN_NAME}:${suffix}`, stage: Stage.Default });

      hooks.sessionStart.tapPromise(name('SessionStart'), async ({ session, source }) => {
        const result = await run({ event: 'SessionStart', matchValue: source, fields: { source }, session });
        if (result.additionalContext.length > 0) pendingContext.set(session, [...(pendingContext.get(session) ?? []), ...result.additionalContext]);
      });
      hooks.userPromptSubmit.tapPromise(name('UserPromptSubmit'), async (context) => {
        const { session } = context;
        const pending = pendingContext.get(session) ?? [];
        pendingContext.delete(session);
        stopped.delete(session);
        // What the user typed (`/audit src`), not the skill prompt it expanded to: hooks match that.
        const result = await run({ event: 'UserPromptSubmit', fields: { prompt: context.rawPrompt ?? context.prompt }, session });
        if (result.blocked || result.stop) return { blocked: { reason: result.reason ?? result.stop?.reason ?? 'blocked by a UserPromptSubmit hook' } };
        const added = [...pending, ...result.additionalContext];
        return added.length > 0 ? { additionalContext: [...context.additionalContext, ...added] } : undefined;
      });
      // Before the permission guard, as in Claude Code: a hook can block, rewrite the input
      // (which the guard then checks), or approve (the guard then skips the prompt its mode
      // would show, but deny rules still deny, and ask rules and protected paths still ask).
      hooks.preToolUse.tapPromise({ name: `${HOOKS_PLUGIN_NAME}:PreToolUse`, stage: PRE_TOOL_USE_STAGE }, async (context) => {
        // The kernel has no seam to end a turn from a hook, so the rest of a stopped turn runs no tools.
        if (stopped.has(context.session)) return { decision: 'deny', reason: STOPPED_BY_HOOK, source: 'hook' };
        if (!runner.has('PreToolUse')) return undefined;
        const { session, toolName, toolCallId, signal } = context;
        const result = await run({
          event: 'PreToolUse',
          matchValue: toolName,
          fields: { tool_name: toolName, tool_input: context.input, tool_use_id: toolCallId },
          session,
          signal,
          tool: { name: toolName, input: context.input, ...(context.tool?.permission === undefined ? {} : { permission: context.tool.permission }) },
        });
        if (result.stop) {
          stopped.add(session);
          return { decision: 'deny', reason: STOPPED_BY_HOOK, source: 'hook' };
        }
        if (result.blocked || result.permissionDecision === 'deny') {
          const reason = result.reason ?? result.permissionDecisionReason ?? 'denied by a PreToolUse hook';
          return { decision: 'deny', reason, source: 'hook' };
        }
        if (result.additionalContext.length > 0) {
          const calls = toolContext.get(session) ?? new Map<string, string[]>();
          calls.set(toolCallId, result.additionalContext);
          toolContext.set(session, calls);
        }
        // Returned, not written: the kernel applies a `continue` decision and the guard runs next.
        const input = result.updatedInput !== undefined ? result.updatedInput : context.input;
        let approvedBy: string | undefined;
        // A person answered this call's prompt: the guard asks no one again (`approvedByPerson`).
        let approvedByPerson = false;
        if (result.permissionDecision === 'ask') {
          const approvalHandler = options.approvalHandler ?? servicesOf(session)?.getOptional(ApprovalHandler);
          const approval: HookApprovalOptions = { ...options, ...(approvalHandler ? { approvalHandler } : {}) };
          const answer = await askForApproval(approval, { toolName, input, sessionId: session.sessionId, toolCallId, signal });
          if (answer !== true) return { decision: 'deny', reason: `${result.permissionDecisionReason ?? 'a hook asked for approval'}; not approved: ${answer}`, source: 'hook' };
          approvedBy = 'PreToolUse hook (approved by the user)';
          approvedByPerson = true;
        }
        // `allow` spares the prompt the guard's mode would show; its deny rules, ask rules and
        // protected paths still apply (Claude Code: "allow" never overrides deny or ask rules).
        // `defer` changes nothing.
        if (result.permissionDecision === 'allow') approvedBy = 'PreToolUse hook';
        if (result.updatedInput === undefined && approvedBy === undefined) return undefined;
        return {
          decision: 'continue',
          ...(result.updatedInput !== undefined ? { input } : {}),
          ...(approvedBy !== undefined ? { approvedBy } : {}),
          ...(approvedByPerson ? { approvedByPerson } : {}),
        };
      });
      const post = (event: 'PostToolUse' | 'PostToolUseFailure') => async (context: PostToolUseContext) => {
        // What a PreToolUse hook added reaches the model with the call's result.
        const calls = toolContext.get(context.session);
        const before = calls?.get(context.toolCallId) ?? [];
        calls?.delete(context.toolCallId);
        if (!runner.has(event)) return before.length > 0 ? { result: appendFeedback(context.result, `<hook-feedback>\n${before.join('\n')}\n</hook-feedback>`) } : undefined;
        const { result: toolResult } = context;
        const fields: Record<string, unknown> = {
          tool_name: context.toolName,
          tool_input: context.input,
          tool_use_id: context.toolCallId,
          duration_ms: context.durationMs,
          ...(event === 'PostToolUse'
            ? { tool_response: toolResult.data ?? toolResult.output }
            : { error: toolResult.error ?? (typeof toolResult.output === 'string' ? toolResult.output : ''), is_interrupt: toolResult.errorCode === 'aborted' }),
        };
        const result = await run({ event, matchValue: context.toolName, fields, session: context.session, tool: { name: context.toolName, input: context.input } });
        if (result.stop) stopped.add(context.session);
        const feedback = [...before, ...(result.blocked && result.reason ? [result.reason] : []), ...result.additionalContext, ...(result.stop ? [STOPPED_BY_HOOK] : [])];
        return feedback.length > 0 ? { result: appendFeedback(toolResult, `<hook-feedback>\n${feedback.join('\n')}\n</hook-feedback>`) } : undefined;
      };
      hooks.postToolUse.tapPromise(name('PostToolUse'), post('PostToolUse'));
      hooks.postToolUseFailure.tapPromise(name('PostToolUseFailure'), post('PostToolUseFailure'));
      hooks.stop.tapPromise(name('Stop'), async ({ session, response, stopHookActive }) => {
        if (!runner.has('Stop')) return undefined;
        const result = await run({ event: 'Stop', fields: { stop_hook_active: stopHookActive, last_assistant_message: response }, session });
        return result.blocked && !result.stop ? { continue: true, reason: result.reason ?? 'A Stop hook asked to continue.' } : undefined;
      });
      hooks.stopFailure.tapPromise(name('StopFailure'), async ({ session, error, reason }) => {
        await run({ event: 'StopFailure', matchValue: reason, fields: { reason, error: describeError(error) }, session });
      });
      hooks.sessionEnd.tapPromise(name('SessionEnd'), async ({ session, reason }) => {
        await run({ event: 'SessionEnd', matchValue: reason, fields: { reason }, session });
      });
      hooks.preCompact.tapPromise(name('PreCompact'), async ({ session, trigger, instructions }) => {
        const result = await run({ event: 'PreCompact', matchValue: trigger, fields: { trigger, custom_instructions: instructions ?? '' }, session });
        if (result.blocked) throw new CompactionBlockedByHookError(result.reason ?? 'no reason given');
      });
      hooks.postCompact.tapPromise(name('PostCompact'), async ({ session, trigger, summary }) => {
        await run({ event: 'PostCompact', matchValue: trigger, fields: { trigger, ...(summary === undefined ? {} : { summary }) }, session });
      });
      hooks.subagentStart.tapPromise(name('SubagentStart'), async ({ session, agentId, agentType }) => {
        await run({ event: 'SubagentStart', matchValue: agentType, fields: { agent_id: agentId, agent_type: agentType }, session });
      });
      hooks.subagentStop.tapPromise(name('SubagentStop'), async ({ session, agentId, agentType, result }) => {
        await run({ event: 'SubagentStop', matchValue: agentType, fields: { agent_id: agentId, agent_type: agentType, stop_hook_active: false, last_assistant_message: result ?? '' }, session });
      });
      hooks.notification.tapPromise(name('Notification'), async ({ session, message, notificationType }) => {
        await run({ event: 'Notification', matchValue: notificationType, fields: { message, notification_type: notificationType }, ...(session ? { session } : {}) });
      });
      hooks.worktreeCreate.tapPromise(name('WorktreeCreate'), async ({ session, path, branch }) => {
        await run({ event: 'WorktreeCreate', fields: { worktree_path: path, ...(branch ? { branch } : {}) }, ...(session ? { session } : {}) });
      });
      hooks.worktreeRemove.tapPromise(name('WorktreeRemove'), async ({ session, path, branch }) => {
        await run({ event: 'WorktreeRemove', fields: { worktree_path: path, ...(branch ? { branch } : {}) }, ...(session ? { session } : {}) });
      });
      return {
        shutdown() {
          for (const stop of state.unsubscribe ?? []) stop();
        },
        async boot({ get, getOptional, getAll }) {
          state.services = { get, getOptional, getAll };
          const loaded: HookEntry[] = [];
          const diagnostics: Diagnostic[] = [];
          for (const file of options.files ?? []) {
            const source: HooksSource = typeof file === 'string' ? { file } : file;
            const parsed = await readHooksFile(source.file, source.pluginRoot === undefined ? {} : { pluginRoot: source.pluginRoot });
            diagnostics.push(...parsed.diagnostics);
            loaded.push(...entriesFrom(parsed.value, source));
          }
          state.runner.add(loaded);
          // Found hook configurations (bundle plugins): merged after the settings files and read
          // again whenever a source says it changed, so `/reload-plugins` reaches this kernel.
          const sources = getAll(HooksConfigSourceContribution);
          const readSources = (): void =>
            state.runner.setContributed(sources.flatMap((source) => source.configs().flatMap(({ config, source: from }) => entriesFrom(config, from))));
          readSources();
          state.unsubscribe = sources.flatMap((source) => (source.onChange ? [source.onChange(readSources)] : []));
          if (diagnostics.length > 0) {
            if (options.onDiagnostics) options.onDiagnostics(diagnostics);
            else {
              const reporter = get(Diagnostics);
              for (const diagnostic of diagnostics) reporter.report(diagnosticReport(diagnostic, 'TESSERA_HOOKS_CONFIG', HOOKS_PLUGIN_NAME));
            }
          }
        },
      };
    },
  });
}
