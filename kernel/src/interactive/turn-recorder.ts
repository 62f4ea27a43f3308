import {
  isChatEntry,
  copyWith,
  type IContextWindowState,
  type IExecutionResult,
  type IToolState,
  type IUsageSnapshot,
  type SessionEvent,
} from '@tessera/contracts';
import { randomUUID } from 'node:crypto';
import type { Session } from '../session.js';
import type { InteractiveEventEmitter } from './events.js';
import { HISTORY_SOURCE, PROMPT_HEAD_CHARS, SUMMARY_TEXT, resultHistory, skillMessage, toolSummaryText, type HistorySource } from './interactive-session-helpers.js';
import { firstArgOf, finishedToolState } from './tool-state.js';

const EMPTY_CONTEXT: IContextWindowState = { usedTokens: 0, maxTokens: 0, usedPercentage: 0, exact: false };

/**
 * The session's stream as an `InteractiveSession` shows it, and its running turn. The facade
 * owns one and reads its fields directly: it maps the session's events to the facade's typed
 * events and timeline event entries, keeps the turn's streamed text, tool states and usage, and
 * builds the turn's result. The handlers are the ones the session calls (no wrapper per event).
 */
export class TurnRecorder {
  /** The facade's session, set with it once it exists. */
  session: Session | undefined;
  /** True while a prompt runs (the facade's queue sets it); only then does a turn's end build a result. */
  executing = false;
  streamingText = '';
  turnTools: IToolState[] = [];
  private turnUsage: { input: number; output: number; cacheRead: number; cacheWrite: number; rounds: number; unreported: number } | undefined;
  /** The turn's result, made when the session reported its end (before it saved). */
  turnResult: IExecutionResult | undefined;

  constructor(private readonly events: InteractiveEventEmitter) {}

  /** Starts a prompt's turn: no text, tools, usage or result yet; `thinking` fires. */
  start(session: Session, input: string, displayInput: string | undefined, rawInput: string | undefined): void {
    this.streamingText = '';
    this.turnTools = [];
    this.turnResult = undefined;
    this.turnUsage = undefined;
    this.events.emit('thinking', true);
    // Recorded when the turn ends, naming the user entry it shows (none when the prompt was blocked).
    this.turnDisplay = displayInput !== undefined && displayInput !== input ? { displayInput, rawInput, promptHead: input.slice(0, PROMPT_HEAD_CHARS), from: session.getFullHistory().length } : undefined;
  }

  /** The running prompt's display text, and where its entries start in the timeline. */
  private turnDisplay: { displayInput: string; rawInput: string | undefined; promptHead: string; from: number } | undefined;

  /** Appends the turn's tool summary and usage entries and builds the result. */
  finishTurn(session: Session, response: string): IExecutionResult {
    const display = this.turnDisplay;
    if (display) {
      this.turnDisplay = undefined;
      // The prompt's user entry, named by how many chat entries back it stands (entry ids change
      // when a store reloads the session; the chat entries' order does not).
      const entries = session.getFullHistory();
      let target = -1;
      for (let index = display.from; index < entries.length; index += 1) {
        const entry = entries[index]!;
        if (isChatEntry(entry) && entry.data.role === 'user') {
          target = index;
          break;
        }
      }
      let chatBack = 0;
      if (target !== -1) for (let index = target; index < entries.length; index += 1) if (entries[index]!.category === 'chat') chatBack += 1;
      this.addEvent(session, 'prompt-display', { displayInput: display.displayInput, ...(display.rawInput === undefined ? {} : { rawInput: display.rawInput }), ...(chatBack > 0 ? { chatBack, promptHead: display.promptHead } : {}) });
    }
    // Finished states are never changed again; only a call still running (an abort) is copied.
    const tools = this.turnTools.map((state) => (state.isRunning ? { ...state } : state));
    if (tools.length > 0) {
      // The summary text is made when first read (a UI, a save): a long turn has many tools.
      const data = { tools } as { tools: IToolState[]; summary: string; [SUMMARY_TEXT]?: string };
      Object.defineProperty(data, SUMMARY_TEXT, { value: undefined, writable: true });
      Object.defineProperty(data, 'summary', { get: toolSummaryText, enumerable: true, configurable: true });
      this.addEvent(session, 'tool-summary', data);
    }
    const contextState = this.getContextState();
    let usage: IUsageSnapshot | undefined;
    const sum = this.turnUsage;
    // Only when a model call reported usage: a provider that reports none gets no usage entry.
    if (sum && sum.unreported < sum.rounds) {
      const prompt = sum.input + sum.cacheRead + sum.cacheWrite;
      usage = {
        kind: sum.unreported === 0 ? 'exact' : 'estimated',
        scope: 'turn',
        promptTokens: prompt,
        completionTokens: sum.output,
        ...(sum.cacheRead > 0 ? { cacheReadTokens: sum.cacheRead } : {}),
        ...(sum.cacheWrite > 0 ? { cacheWriteTokens: sum.cacheWrite } : {}),
        totalTokens: prompt + sum.output,
        contextUsedTokens: contextState.usedTokens,
        contextMaxTokens: contextState.maxTokens,
        contextUsedPercentage: contextState.usedPercentage,
        costStatus: 'unknown',
      };
      this.addEvent(session, 'usage-summary', usage);
    }
    // The timeline is copied only when someone reads `history` (a long session has many
    // entries): the entries up to this turn's end, as long as history was not replaced since.
    const result = { response, toolSummaries: tools, contextState, ...(usage ? { usage } : {}) } as unknown as IExecutionResult;
    const entries = session.getFullHistory();
    const source: HistorySource = { entries, length: entries.length };
    Object.defineProperty(result, HISTORY_SOURCE, { value: source });
    Object.defineProperty(result, 'history', { get: resultHistory, enumerable: true, configurable: true });
    return result;
  }

  /** Event entry ids: one random prefix per interactive session, then a counter (cheap on the tool path). */
  private readonly idPrefix = `ev-${randomUUID().slice(0, 8)}-`;
  private nextEntry = 0;
  private stampMs = Number.NaN;
  private stamp = '';

  addEvent(session: Session, type: string, data: unknown): void {
    const now = session.clock.now();
    if (now !== this.stampMs) {
      this.stampMs = now;
      this.stamp = new Date(now).toISOString();
    }
    session.addHistoryEntry({ id: this.idPrefix + ++this.nextEntry, timestamp: this.stamp, category: 'event', type, data });
  }

  // ------------------------------------------------------------------ the session's stream

  /** Streamed text comes straight from the turn runner (see `Session.observe`): no event object per chunk. */
  readonly onTextDelta = (delta: string): void => {
    this.streamingText += delta;
    this.events.emit('text_delta', delta);
  };

  readonly onSessionEvent = (event: SessionEvent): void => {
    const session = this.session!;
    switch (event.type) {
      case 'thinking_delta':
        this.events.emit('thinking_delta', event.delta);
        break;
      case 'assistant_message': {
        const usage = event.message.usage;
        const sum = (this.turnUsage ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, rounds: 0, unreported: 0 });
        sum.rounds += 1;
        if (usage) {
          sum.input += usage.inputTokens;
          sum.output += usage.outputTokens;
          sum.cacheRead += usage.cacheReadTokens ?? 0;
          sum.cacheWrite += usage.cacheWriteTokens ?? 0;
        } else sum.unreported += 1;
        // The next round streams new text; what was streamed is in the message now.
        this.streamingText = '';
        break;
      }
      case 'tool_start': {
        const state: IToolState = { toolCallId: event.toolCallId, toolName: event.toolName, firstArg: firstArgOf(event.input), isRunning: true };
        this.turnTools.push(state);
        // `state` is never changed (the call's end replaces it), so the timeline entry shares it.
        this.addEvent(session, 'tool-start', state);
        if (this.events.has('tool_start')) this.events.emit('tool_start', { ...state });
        break;
      }
      case 'tool_end': {
        // The call that ends is almost always the latest one; parallel batches are short.
        let index = this.turnTools.length - 1;
        while (index >= 0 && this.turnTools[index]!.toolCallId !== event.toolCallId) index -= 1;
        const running = index >= 0 ? this.turnTools[index]! : { toolCallId: event.toolCallId, toolName: event.toolName, firstArg: firstArgOf(event.input), isRunning: true };
        const finished = finishedToolState(running, event);
        if (index >= 0) this.turnTools[index] = finished;
        else this.turnTools.push(finished);
        this.addEvent(session, 'tool-end', finished);
        if (this.events.has('tool_end')) this.events.emit('tool_end', { ...finished });
        break;
      }
      case 'context_update':
        if (this.events.has('context_update')) this.events.emit('context_update', this.withThreshold(event.state));
        break;
      // The turn's end, reported before the session saves: summary entries added now are saved with it.
      case 'turn_end':
        if (this.executing) this.turnResult = this.finishTurn(session, event.text);
        break;
      case 'interrupted':
        if (this.executing) this.turnResult = this.finishTurn(session, this.streamingText);
        break;
      case 'error':
        if (this.executing) {
          this.turnResult = this.finishTurn(session, this.streamingText);
          this.addEvent(session, 'system', { level: 'error', message: event.message, ...(event.code === undefined ? {} : { code: event.code }) });
        }
        break;
      case 'prompt_file_reference':
        this.addEvent(session, 'prompt-file-reference', { prompt: event.prompt, references: event.references });
        this.events.emit('prompt_file_reference', { prompt: event.prompt, references: event.references });
        break;
      case 'skill_activation':
        this.addEvent(session, 'skill-activation', { ...event.event, message: skillMessage(event.event) });
        this.events.emit('skill_activation', event.event);
        break;
      default:
        break;
    }
  };

  /** Context-window usage with the auto-compaction threshold; zeros before the session is ready or without a tracker. */
  getContextState(): IContextWindowState & { autoCompactThreshold: number | false } {
    return this.withThreshold(this.session?.getContextState() ?? EMPTY_CONTEXT);
  }

  private withThreshold(state: IContextWindowState): IContextWindowState & { autoCompactThreshold: number | false } {
    return copyWith(state, { autoCompactThreshold: this.session?.getAutoCompactThreshold() ?? false });
  }
}
