import { randomUUID } from 'node:crypto';
import type { BackgroundTaskNotice, IContextWindowState, IToolState, SessionEvent } from '@tessera/contracts';

/**
 * One part of the Vercel AI SDK "UI message stream" (protocol v1, what `useChat` with
 * `DefaultChatTransport`, assistant-ui and `readUIMessageStream` consume): sent as an SSE
 * `data:` line, or as a WebSocket text frame.
 */
export type UIChunk =
  | { type: 'start'; messageId: string; messageMetadata?: unknown }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'finish'; finishReason?: 'stop' | 'error' | 'other' | 'length'; messageMetadata?: unknown }
  | { type: 'abort'; reason?: string }
  | { type: 'error'; errorText: string }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: `data-${string}`; id?: string; data: unknown; transient?: boolean };

/** Tessera's own parts, as `data-*` parts the AI SDK passes through. */
export const DATA_PERMISSION = 'data-tessera-permission';
export const DATA_CONTEXT = 'data-tessera-context';
export const DATA_BACKGROUND = 'data-tessera-background';

/** A permission ask as a client sees it (and answers with `POST …/permissions/:requestId`). */
export interface PermissionAskData {
  requestId: string;
  status: 'pending' | 'allowed' | 'denied' | 'timed_out' | 'cancelled';
  toolName: string;
  toolCallId: string;
  input: unknown;
  suggestedRule?: string;
}

/**
 * Turns one turn's session events into UI message stream parts, in order: `start`, then per
 * model round `start-step` … `finish-step` holding text, reasoning and tool parts, then
 * `finish` (or `abort` / `error` first). Stateless about transport: `emit` receives every part.
 */
export class UiStreamMapper {
  private round = -1;
  private stepOpen = false;
  private text: string | undefined;
  private reasoning: string | undefined;
  private ended = false;
  private readonly toolNames = new Map<string, string>();

  constructor(
    private readonly emit: (chunk: UIChunk) => void,
    readonly messageId: string = `msg_${randomUUID()}`,
  ) {}

  start(): void {
    this.emit({ type: 'start', messageId: this.messageId });
  }

  /** Kernel session events: text, reasoning, tool inputs, round boundaries. */
  sessionEvent(event: SessionEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case 'text_delta':
        this.enterRound(event.round);
        this.closeReasoning();
        if (this.text === undefined) {
          this.text = `text_${randomUUID()}`;
          this.emit({ type: 'text-start', id: this.text });
        }
        this.emit({ type: 'text-delta', id: this.text, delta: event.delta });
        return;
      case 'thinking_delta':
        this.enterRound(event.round);
        if (this.reasoning === undefined) {
          this.reasoning = `reasoning_${randomUUID()}`;
          this.emit({ type: 'reasoning-start', id: this.reasoning });
        }
        this.emit({ type: 'reasoning-delta', id: this.reasoning, delta: event.delta });
        return;
      case 'tool_input_delta':
        this.enterRound(event.round);
        this.openTool(event.toolCallId, event.toolName);
        this.emit({ type: 'tool-input-delta', toolCallId: event.toolCallId, inputTextDelta: event.delta });
        return;
      case 'tool_start':
        this.enterRound(event.round);
        // Already open when its input streamed (tool-input-delta parts); else opened here.
        this.openTool(event.toolCallId, event.toolName);
        this.emit({ type: 'tool-input-available', toolCallId: event.toolCallId, toolName: event.toolName, input: event.input ?? {} });
        return;
      case 'context_update':
        this.context(event.state);
        return;
      default:
        return;
    }
  }

  /** A finished tool call (the interactive session's state: output preview, diff, failure). */
  toolEnd(state: IToolState): void {
    if (this.ended || !this.toolNames.has(state.toolCallId)) return;
    if (state.result === 'success') {
      this.emit({
        type: 'tool-output-available',
        toolCallId: state.toolCallId,
        output: {
          summary: state.firstArg,
          ...(state.toolResultData === undefined ? {} : { output: state.toolResultData }),
          ...(state.diffFile === undefined ? {} : { diffFile: state.diffFile }),
          ...(state.diffLines === undefined ? {} : { diff: state.diffLines }),
        },
      });
    } else {
      const reason = state.result === 'denied' || state.denied ? 'denied' : (state.errorCode ?? 'failed');
      this.emit({ type: 'tool-output-error', toolCallId: state.toolCallId, errorText: `${this.toolNames.get(state.toolCallId)} ${reason}${state.toolResultData ? `: ${state.toolResultData.slice(0, 2000)}` : ''}` });
    }
  }

  permission(data: PermissionAskData): void {
    if (this.ended) return;
    this.emit({ type: DATA_PERMISSION, id: data.requestId, data });
  }

  context(state: IContextWindowState): void {
    if (this.ended) return;
    this.emit({ type: DATA_CONTEXT, id: 'context', data: { usedTokens: state.usedTokens, maxTokens: state.maxTokens, usedPercentage: state.usedPercentage }, transient: true });
  }

  background(event: BackgroundTaskNotice): void {
    if (this.ended) return;
    this.emit({ type: DATA_BACKGROUND, id: event.taskId, data: event });
  }

  /** The turn ended normally. */
  finish(): void {
    if (this.ended) return;
    this.closeStep();
    this.ended = true;
    this.emit({ type: 'finish', finishReason: 'stop' });
  }

  /** The turn was interrupted (a client's abort, a disconnect). */
  abort(reason: string): void {
    if (this.ended) return;
    this.closeStep();
    this.ended = true;
    this.emit({ type: 'abort', reason });
    this.emit({ type: 'finish', finishReason: 'other' });
  }

  fail(message: string): void {
    if (this.ended) return;
    this.closeStep();
    this.ended = true;
    this.emit({ type: 'error', errorText: message });
    this.emit({ type: 'finish', finishReason: 'error' });
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private enterRound(round: number): void {
    if (round === this.round && this.stepOpen) return;
    this.closeStep();
    this.round = round;
    this.stepOpen = true;
    this.emit({ type: 'start-step' });
  }

  private closeStep(): void {
    this.closeText();
    this.closeReasoning();
    if (this.stepOpen) {
      this.stepOpen = false;
      this.emit({ type: 'finish-step' });
    }
  }

  /** `tool-input-start` for a call not seen yet (text and reasoning before it are closed). */
  private openTool(toolCallId: string, toolName: string): void {
    if (this.toolNames.has(toolCallId)) return;
    this.closeText();
    this.closeReasoning();
    this.toolNames.set(toolCallId, toolName);
    this.emit({ type: 'tool-input-start', toolCallId, toolName });
  }

  private closeText(): void {
    if (this.text === undefined) return;
    this.emit({ type: 'text-end', id: this.text });
    this.text = undefined;
  }

  private closeReasoning(): void {
    if (this.reasoning === undefined) return;
    this.emit({ type: 'reasoning-end', id: this.reasoning });
    this.reasoning = undefined;
  }
}
