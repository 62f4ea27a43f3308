import type * as acp from '@agentclientprotocol/sdk';
import { RequestError } from '@agentclientprotocol/sdk';
import { describeError, isApproved, isChatEntry, parsePermissionMode, type ApprovalAnswer, type ApprovalHandler, type ApprovalRequest, type Message, type PermissionMode, type SessionEvent } from '@tessera/contracts';
import { SESSION_APPLIED_EFFECTS, type InteractiveSession } from '@tessera/kernel';
import { approvalAnswer, permissionRequest } from './acp-permissions.js';
import { editDiffs, planFromTodos, resultContent, toolCallStart, toolLocations } from './acp-updates.js';
import { historyUpdates } from './history-replay.js';
import { parseSlashCommand, promptText } from './prompt-content.js';

/** What a session adapter needs of the client: updates out, permission questions answered. */
export interface AcpPeer {
  sessionUpdate(notification: acp.SessionNotification): Promise<void>;
  requestPermission(request: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
}

/** Modes an editor may switch a session to (Tessera's permission modes). */
const MODES: ReadonlyArray<{ id: PermissionMode; name: string; description: string }> = [
  { id: 'default', name: 'Ask', description: 'Ask before edits and commands that the permission rules do not allow' },
  { id: 'acceptEdits', name: 'Accept edits', description: 'Edits in the workspace run without asking' },
  { id: 'plan', name: 'Plan', description: 'Read and plan only; nothing is changed' },
  { id: 'dontAsk', name: "Don't ask", description: 'Calls that would ask are refused instead' },
  { id: 'bypassPermissions', name: 'Bypass permissions', description: 'Every call runs without asking' },
];

interface ToolCall {
  toolName: string;
  input: unknown;
  started: boolean;
}

/**
 * One Tessera session as ACP sees it: the session's event stream mapped to `session/update`s,
 * prompts and slash commands run through the `InteractiveSession`, permission asks sent to the
 * client. Holds no business logic: every decision is the session's or the client's.
 *
 * Updates are sent in order through one queue; `prompt` resolves only after every update of its
 * turn was written, so the client sees the whole turn before the `stopReason`.
 */
export class AcpSession implements ApprovalHandler {
  readonly sessionId: string;
  private outbox: Promise<void> = Promise.resolve();
  private readonly calls = new Map<string, ToolCall>();
  /** Calls that ended and whose output (in the next tool message) is still to be shown. */
  private readonly awaitingOutput = new Set<string>();
  private running = false;
  private cancelled = false;
  private interrupted = false;
  /** The mode the client was last told of (its mode picker shows it). */
  private clientMode: PermissionMode;
  private readonly unsubscribe: () => void;

  constructor(
    readonly interactive: InteractiveSession,
    private readonly peer: AcpPeer,
    private readonly options: { modes: readonly PermissionMode[]; log: (message: string) => void },
  ) {
    this.sessionId = interactive.getSessionId();
    // The modes the client was offered bound every switch, `/permissions` typed in a prompt included.
    interactive.getSession().limitPermissionModes(options.modes.includes('default') ? options.modes : ['default', ...options.modes]);
    this.clientMode = interactive.getSession().getPermissionMode();
    this.unsubscribe = interactive.getSession().subscribe(this.onEvent);
  }

  // ---------------------------------------------------------------- lifecycle

  /** The mode state for `session/new` and `session/load`. */
  modeState(): acp.SessionModeState {
    this.clientMode = this.interactive.getSession().getPermissionMode();
    return {
      currentModeId: this.clientMode,
      availableModes: MODES.filter((mode) => this.options.modes.includes(mode.id)),
    };
  }

  setMode(modeId: string): void {
    const mode = parsePermissionMode(modeId);
    if (mode === undefined || !this.options.modes.includes(mode)) {
      throw RequestError.invalidParams({ modeId }, `Unknown mode "${modeId}"; this session offers ${this.options.modes.join(', ')}.`);
    }
    this.interactive.getSession().setPermissionMode(mode);
    this.clientMode = mode;
  }

  /**
   * Sends the session's user-invocable slash commands (`available_commands_update`): the composed
   * ones, then skills and bundle plugins' commands from the palette's registry.
   */
  async advertiseCommands(): Promise<void> {
    const seen = new Set<string>();
    const availableCommands: acp.AvailableCommand[] = [];
    const add = (name: string, description: string, hint: string | undefined): void => {
      if (seen.has(name)) return;
      seen.add(name);
      availableCommands.push({ name, description, ...(hint ? { input: { hint } } : {}) });
    };
    for (const command of this.interactive.listCommands()) if (command.userInvocable) add(command.name, command.description, command.argumentHint);
    try {
      for (const command of (await this.interactive.getCommandRegistry()).getCommands()) add(command.name, command.description, command.argumentHint);
    } catch {
      // No registry: the composed commands are the list.
    }
    return this.send({ sessionUpdate: 'available_commands_update', availableCommands });
  }

  /** Replays the stored conversation (`session/load`), resolved once all of it was sent. */
  replay(): Promise<void> {
    const messages = this.interactive.getFullHistory().filter(isChatEntry).map((entry) => entry.data as Message);
    for (const update of historyUpdates(messages)) void this.send(update);
    return this.outbox;
  }

  /**
   * Stops mapping events; `shutdown` also ends the Tessera session (it is saved). A prompt still
   * running is cancelled first, as ACP says closing does: its answer is `cancelled`, which the
   * events no longer mapped (`interrupted`) could not tell it.
   */
  async close(options: { shutdown: boolean }): Promise<void> {
    this.cancel();
    this.unsubscribe();
    if (options.shutdown) await this.interactive.shutdown({ reason: 'other' });
  }

  // ---------------------------------------------------------------- prompts

  /**
   * Runs a prompt turn: a slash command when the text starts with `/name` and the session has
   * that command, else a model turn. Resolves with the stop reason after the turn's updates.
   */
  async prompt(blocks: readonly acp.ContentBlock[]): Promise<acp.StopReason> {
    if (this.running) {
      throw RequestError.invalidRequest({ sessionId: this.sessionId }, `Session ${this.sessionId} is already running a prompt; wait for its response or send session/cancel first.`);
    }
    const text = promptText(blocks);
    this.running = true;
    this.cancelled = false;
    this.interrupted = false;
    try {
      const command = parseSlashCommand(text);
      return (command && (await this.runCommand(command.name, command.args))) ?? (await this.runTurn(text));
    } finally {
      this.reportMode();
      await this.outbox;
      this.running = false;
    }
  }

  /**
   * `session/cancel`: aborts the running turn (its prompt resolves `cancelled`). Before the turn
   * has started (a command is still being resolved) the abort reaches nothing: the flag keeps a
   * later turn of this prompt from running (`runTurn`, and `turn_start` for one a command starts).
   */
  cancel(): void {
    if (!this.running) return;
    this.cancelled = true;
    this.interactive.abort();
  }

  /**
   * A command (`/permissions`, `/mode`), a tool or the host may have switched the mode; the
   * client's mode picker must not go on showing the old one (`current_mode_update`).
   */
  private reportMode(): void {
    const mode = this.interactive.getSession().getPermissionMode();
    if (mode === this.clientMode || !this.options.modes.includes(mode)) return;
    this.clientMode = mode;
    void this.send({ sessionUpdate: 'current_mode_update', currentModeId: mode });
  }

  private async runTurn(text: string): Promise<acp.StopReason> {
    // Cancelled while a command was resolved: the client already shows the turn stopped.
    if (this.cancelled) return 'cancelled';
    try {
      await this.interactive.submit(text);
    } catch (error) {
      this.flushOutputs();
      if (this.cancelled) return 'cancelled';
      await this.outbox;
      throw new RequestError(-32603, `The turn failed: ${describeError(error)}`, { sessionId: this.sessionId });
    }
    this.flushOutputs();
    if (this.cancelled || this.interrupted) return 'cancelled';
    return stopReasonOf(this.interactive.getMessages());
  }

  /** `undefined` when the session has no such command (the text then goes to the model). */
  private async runCommand(name: string, args: string): Promise<acp.StopReason | undefined> {
    const streamedBefore = this.streamedText;
    const result = await this.interactive.executeCommand(name, args);
    if (result === null) return undefined;
    // A command that ran a turn (a skill, a plugin command) already streamed its answer: its
    // result message is that answer again, so only what did not stream is sent.
    const streamed = this.streamedText !== streamedBefore;
    const lines = [streamed ? '' : result.message, ...(result.diagnostics ?? [])];
    if (result.interaction) {
      lines.push(`(/${name} asks "${result.interaction.prompt.title}", which needs Tessera's terminal; it is not available over ACP.)`);
      await Promise.resolve(result.interaction.cancel?.()).catch(() => undefined);
    }
    const message = lines.filter((line) => line !== '').join('\n');
    if (message !== '') void this.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: message } });
    let reason: acp.StopReason = this.cancelled || this.interrupted ? 'cancelled' : 'end_turn';
    for (const effect of result.effects ?? []) {
      // The session applied the rename (and any model or language change) itself; the client is told the new title.
      if (effect.type === 'session-renamed') void this.send({ sessionUpdate: 'session_info_update', title: effect.name });
      else if (effect.type === 'prompt-submit-requested') reason = await this.runTurn(effect.text);
      else if (!SESSION_APPLIED_EFFECTS.has(effect.type) && effect.type !== 'conversation-history-cleared') this.options.log(`acp: /${name} asked for "${effect.type}", which the ACP transport does not apply.`);
    }
    return reason;
  }

  // ---------------------------------------------------------------- permissions

  /** The session's `ApprovalHandler` (routed by the host's `ApprovalRouter`). */
  async requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const answer = approvalAnswer(await this.peer.requestPermission(permissionRequest(this.sessionId, request), request.signal));
    if (isApproved(answer)) this.markStarted(request.toolCallId);
    return answer;
  }

  // ---------------------------------------------------------------- events → updates

  /** Text deltas streamed so far (a command that ran a turn is known by it). */
  private streamedText = 0;

  private readonly onEvent = (event: SessionEvent): void => {
    if (this.awaitingOutput.size > 0 && !event.type.startsWith('tool_')) this.flushOutputs();
    switch (event.type) {
      case 'turn_start':
        // A turn a command started itself (a skill's prompt) after the cancel: the earlier abort found nothing to stop.
        if (this.cancelled && this.running) this.interactive.abort();
        break;
      case 'text_delta':
        this.streamedText += 1;
        void this.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.delta } });
        break;
      case 'thinking_delta':
        void this.send({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: event.delta } });
        break;
      case 'tool_start': {
        this.calls.set(event.toolCallId, { toolName: event.toolName, input: event.input, started: false });
        void this.send(toolCallStart(event.toolCallId, event.toolName, event.input));
        const plan = planFromTodos(event.toolName, event.input);
        if (plan) void this.send({ sessionUpdate: 'plan', ...plan });
        break;
      }
      case 'tool_progress':
        this.markStarted(event.toolCallId);
        break;
      case 'tool_end': {
        const diffs = event.success ? editDiffs(event.toolName, event.input) : [];
        void this.send({
          sessionUpdate: 'tool_call_update',
          toolCallId: event.toolCallId,
          status: event.success ? 'completed' : 'failed',
          ...(diffs.length > 0 ? { content: diffs } : {}),
          locations: toolLocations(event.toolName, event.input, event.data),
        });
        if (diffs.length === 0) this.awaitingOutput.add(event.toolCallId);
        else this.calls.delete(event.toolCallId);
        break;
      }
      case 'interrupted':
        this.interrupted = true;
        break;
      default:
        break;
    }
  };

  private markStarted(toolCallId: string): void {
    const call = this.calls.get(toolCallId);
    if (!call || call.started) return;
    call.started = true;
    void this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' });
  }

  /**
   * Tool output reaches history in the tool message after its batch (the event stream carries
   * only structured data), so it is shown at the next event after that, or when the turn ends.
   */
  private flushOutputs(): void {
    if (this.awaitingOutput.size === 0) return;
    const messages = this.interactive.getMessages();
    for (let index = messages.length - 1; index >= 0 && index >= messages.length - 6; index--) {
      const message = messages[index]!;
      if (message.role !== 'tool') continue;
      for (const block of message.content) {
        if (!this.awaitingOutput.delete(block.toolUseId)) continue;
        this.calls.delete(block.toolUseId);
        const content = resultContent(block);
        if (content.length > 0) void this.send({ sessionUpdate: 'tool_call_update', toolCallId: block.toolUseId, content });
      }
    }
  }

  private send(update: acp.SessionUpdate): Promise<void> {
    const notification: acp.SessionNotification = { sessionId: this.sessionId, update };
    this.outbox = this.outbox.then(
      () => this.peer.sessionUpdate(notification),
    ).catch((error: unknown) => this.options.log(`acp: could not send a ${update.sessionUpdate} update: ${describeError(error)}`));
    return this.outbox;
  }
}

/** How a finished turn ended, from its last message. */
export function stopReasonOf(messages: readonly Message[]): acp.StopReason {
  const last = messages.at(-1);
  // Tool results the model never saw: the turn stopped at its round limit (maxTurns).
  if (last?.role === 'tool') return 'max_turn_requests';
  if (last?.role === 'assistant') {
    if (last.stopReason === 'max_tokens') return 'max_tokens';
    if (last.stopReason === 'refusal') return 'refusal';
    if (last.state === 'interrupted' || last.stopReason === 'aborted') return 'cancelled';
  }
  return 'end_turn';
}
