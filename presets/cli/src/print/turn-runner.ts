import { randomUUID } from 'node:crypto';
import { describeError, toolUses, type ImageBlock, type SessionEvent, type TextBlock } from '@tessera/contracts';
import type { InteractiveSession, Session } from '@tessera/kernel';
import type { CliFlags } from '../args.js';
import type { Output } from './output.js';
import {
  addUsage,
  assistantMessage,
  costUsd,
  emptyUsage,
  hasPrice,
  PartialMessageStream,
  toAnthropicUsage,
  toolResultMessage,
  type AnthropicUsage,
  type ModelUsageEntry,
  type PermissionDenial,
  type ResultMessage,
  type ResultSubtype,
} from './sdk-messages.js';
import { MAX_STRUCTURED_OUTPUT_ATTEMPTS, STRUCTURED_OUTPUT_REMINDER, STRUCTURED_OUTPUT_TOOL, type StructuredOutputSchema } from './structured-output.js';

interface TurnTotals {
  usage: AnthropicUsage;
  apiMs: number;
  rounds: number;
  denials: PermissionDenial[];
  errors: string[];
  lastStop: string | null;
  interrupted: boolean;
}

/** Runs one prompt and writes its messages and result. */
export class TurnRunner {
  lastFailed = false;
  private initSent = false;
  private readonly models = new Map<string, ModelUsageEntry>();
  private readonly totalUsage = emptyUsage();
  private totalCost = 0;

  constructor(
    private readonly interactive: InteractiveSession,
    private readonly session: Session,
    private readonly out: Output,
    private readonly flags: CliFlags,
    private readonly model: string,
    private readonly structured: StructuredOutputSchema | undefined,
    private readonly init: () => Record<string, unknown>,
  ) {
    // Another session's model call (a subagent's; they share the kernel's hooks) is priced into
    // `total_cost_usd` and `modelUsage` as Claude Code does (`usage` stays the main loop's),
    // whenever it ends: a background subagent still running after its turn's result is in the
    // next result (the cost is cumulative), and counts against `--max-budget-usd` from then on.
    out.onMessage((message, owner) => {
      if (owner === session || message.role !== 'assistant' || message.usage === undefined) return;
      this.priceCall(message, toAnthropicUsage(message.usage), (owner as { getModel?: () => string | undefined }).getModel?.() ?? session.getModel());
      this.afterOtherCall?.();
    });
  }

  /** Set while a turn runs: checks the budget after another session's model call. */
  private afterOtherCall: (() => void) | undefined;

  sendInit(): void {
    if (this.initSent) return;
    this.initSent = true;
    this.out.line(this.init());
  }

  /**
   * A stream-json message that cannot be sent (a bad image block): its result is an error
   * naming the line and field, and no model call is made.
   */
  refuse(error: string): void {
    this.sendInit();
    const result: ResultMessage = {
      type: 'result',
      subtype: 'error_during_execution',
      uuid: randomUUID(),
      session_id: this.session.sessionId,
      is_error: true,
      duration_ms: 0,
      duration_api_ms: 0,
      num_turns: 0,
      stop_reason: null,
      terminal_reason: 'invalid_input',
      total_cost_usd: this.spent(),
      usage: emptyUsage(),
      modelUsage: Object.fromEntries(this.models),
      permission_denials: [],
      errors: [error],
    };
    this.out.result(result);
    this.lastFailed = true;
  }

  /** Runs `prompt`; with `blocks` (a stream-json message with images), its message holds them. */
  async turn(prompt: string, blocks?: ReadonlyArray<TextBlock | ImageBlock>): Promise<boolean> {
    const { session, out, flags } = this;
    this.sendInit();
    const started = Date.now();
    // `--max-budget-usd`, over the whole process (cost is cumulative across stream-json turns):
    // checked before a turn and after each model call. Once reached, no further model call is
    // made and the tool calls of the reply that reached it are not run.
    const budget = flags.maxBudgetUsd;
    let overBudget = budget !== undefined && this.spent() >= budget;
    const totals: TurnTotals = { usage: emptyUsage(), apiMs: 0, rounds: 0, denials: [], errors: [], lastStop: null, interrupted: false };
    const toolData = new Map<string, unknown>();
    const inputs = new Map<string, unknown>();
    // `--json-schema`: the accepted StructuredOutput input ends the turn; failed attempts are counted.
    const structured = this.structured;
    let structuredOutput: { value: unknown } | undefined;
    let structuredFailures = 0;
    let structuredGaveUp = false;
    let roundStarted = started;
    let messageId = `msg_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const partial = flags.includePartialMessages
      ? new PartialMessageStream((event) => out.line({ type: 'stream_event', event, session_id: session.sessionId, parent_tool_use_id: null, uuid: randomUUID() }), () => messageId, this.model)
      : undefined;
    let atLineStart = true;
    const progress = (text: string): void => {
      if (text === '') return;
      out.progress(text);
      atLineStart = text.endsWith('\n');
    };
    const unsubscribe = session.subscribe((event: SessionEvent) => {
      switch (event.type) {
        case 'text_delta':
          partial?.delta('text', event.delta);
          progress(event.delta);
          break;
        case 'thinking_delta':
          partial?.delta('thinking', event.delta);
          break;
        case 'assistant_message': {
          totals.rounds += 1;
          totals.apiMs += Date.now() - roundStarted;
          partial?.finish(event.message);
          const usage = toAnthropicUsage(event.message.usage);
          addUsage(totals.usage, usage);
          this.priceCall(event.message, usage, session.getModel());
          totals.lastStop = event.message.stopReason ?? null;
          // Aborted here, synchronously, the turn ends before running the reply's tool calls.
          if (budget !== undefined && !overBudget && this.spent() >= budget && toolUses(event.message).length > 0) {
            overBudget = true;
            this.interactive.abort();
          }
          out.line(assistantMessage(event.message, session.sessionId, messageId, this.model));
          messageId = `msg_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
          break;
        }
        case 'tool_start':
          inputs.set(event.toolCallId, event.input);
          progress(`${atLineStart ? '' : '\n'}  → ${event.toolName}(${summarize(event.input)})`);
          break;
        case 'tool_end':
          if (event.data !== undefined) toolData.set(event.toolCallId, event.data);
          if (structured && event.toolName === STRUCTURED_OUTPUT_TOOL && structuredOutput === undefined && !structuredGaveUp) {
            const data = event.data as { structuredOutput?: unknown } | undefined;
            if (event.success && data !== undefined && 'structuredOutput' in data) {
              structuredOutput = { value: data.structuredOutput };
              // The answer is in: no further model call (the rest of this batch is skipped).
              this.interactive.abort();
            } else if (!event.denied && (structuredFailures += 1) >= MAX_STRUCTURED_OUTPUT_ATTEMPTS) {
              structuredGaveUp = true;
              this.interactive.abort();
            }
          }
          if (event.denied) totals.denials.push({ tool_name: event.toolName, tool_use_id: event.toolCallId, tool_input: event.input ?? inputs.get(event.toolCallId) ?? {} });
          progress(event.success ? ' ✓\n' : event.denied ? ' ✗ denied\n' : ` ✗ ${event.errorCode ?? 'failed'}\n`);
          break;
        case 'provider_retry':
          out.line({
            type: 'system',
            subtype: 'api_retry',
            attempt: event.retry.attempt,
            max_retries: event.retry.maxRetries,
            retry_delay_ms: Math.round(event.retry.delayMs),
            error_status: event.retry.status ?? null,
            error: event.retry.code,
            message: event.retry.message,
            session_id: session.sessionId,
            uuid: randomUUID(),
          });
          break;
        case 'compact':
          out.line({ type: 'system', subtype: 'compact_boundary', session_id: session.sessionId, uuid: randomUUID(), compact_metadata: { trigger: event.trigger, pre_tokens: event.before?.usedTokens ?? 0 } });
          break;
        case 'error':
          totals.errors.push(event.message);
          break;
        case 'interrupted':
          totals.interrupted = true;
          break;
        default:
          break;
      }
    });
    // Under `--max-budget-usd`, another session's call (priced by the constructor's listener)
    // that reaches the budget ends the turn, the subagent with it.
    this.afterOtherCall = () => {
      if (budget !== undefined && !overBudget && this.spent() >= budget) {
        overBudget = true;
        this.interactive.abort();
      }
    };
    const stopMessages = out.onMessage((message, owner) => {
      if (owner !== session || message.role !== 'tool') return;
      out.line(toolResultMessage(message, session.sessionId, toolData));
      roundStarted = Date.now();
    });
    let response = '';
    try {
      let result = overBudget ? undefined : await this.interactive.submit(prompt, undefined, undefined, blocks ? { content: blocks } : undefined);
      // `--json-schema`: a reply that ended without a conforming call gets a reminder, up to the limit.
      while (structured && result !== undefined && structuredOutput === undefined && !structuredGaveUp && !overBudget && !totals.interrupted && totals.errors.length === 0 && !this.stoppedAtMaxTurns(totals.rounds)) {
        structuredFailures += 1;
        if (structuredFailures >= MAX_STRUCTURED_OUTPUT_ATTEMPTS) {
          structuredGaveUp = true;
          break;
        }
        result = await this.interactive.submit(STRUCTURED_OUTPUT_REMINDER);
      }
      response = result?.response ?? '';
    } catch (error) {
      const message = describeError(error);
      // The session already reported it as an `error` event when it ended the turn.
      if (!totals.errors.includes(message) && !overBudget) totals.errors.push(message);
    } finally {
      unsubscribe();
      stopMessages();
      this.afterOtherCall = undefined;
    }
    if (!atLineStart) progress('\n');

    const history = session.getHistory();
    const hitMaxTurns = structuredOutput === undefined && this.stoppedAtMaxTurns(totals.rounds) && history.at(-1)?.role === 'tool';
    // The abort that ended a turn at its accepted StructuredOutput call is not an interruption.
    const interrupted = totals.interrupted && structuredOutput === undefined && !structuredGaveUp;
    const subtype: ResultSubtype = overBudget
      ? 'error_max_budget_usd'
      : structuredOutput !== undefined
        ? 'success'
        : structuredGaveUp
          ? 'error_max_structured_output_retries'
          : totals.errors.length > 0 || interrupted
            ? 'error_during_execution'
            : hitMaxTurns
              ? 'error_max_turns'
              : structured
                ? 'error_max_structured_output_retries'
                : 'success';
    addUsage(this.totalUsage, totals.usage);
    this.totalCost = [...this.models.entries()].reduce((sum, [, entry]) => sum + entry.costUSD, 0);
    const result: ResultMessage = {
      type: 'result',
      subtype,
      uuid: randomUUID(),
      session_id: session.sessionId,
      is_error: subtype !== 'success',
      duration_ms: Date.now() - started,
      duration_api_ms: totals.apiMs,
      num_turns: totals.rounds,
      ...(subtype === 'success' ? { result: response } : {}),
      ...(subtype === 'success' && structuredOutput !== undefined ? { structured_output: structuredOutput.value } : {}),
      stop_reason: subtype === 'success' ? (totals.lastStop ?? 'end_turn') : null,
      terminal_reason:
        subtype === 'success' ? 'completed' : overBudget ? 'budget_exhausted' : subtype === 'error_max_structured_output_retries' ? 'structured_output_retries' : hitMaxTurns ? 'max_turns' : interrupted ? 'aborted' : 'api_error',
      total_cost_usd: this.totalCost,
      usage: totals.usage,
      modelUsage: Object.fromEntries(this.models),
      permission_denials: totals.denials,
      ...(subtype === 'success'
        ? {}
        : {
            errors: overBudget
              ? [`Reached maximum budget ($${budget}): this run has cost $${this.totalCost.toFixed(4)}`]
              : subtype === 'error_max_structured_output_retries'
                ? [`The model did not produce output conforming to --json-schema after ${MAX_STRUCTURED_OUTPUT_ATTEMPTS} attempts (${STRUCTURED_OUTPUT_TOOL} calls with non-conforming input, or replies without the call).`]
                : hitMaxTurns
                ? [`Reached maximum number of turns (${flags.maxTurns})`]
                : interrupted
                  ? ['The turn was interrupted.', ...totals.errors]
                  : totals.errors,
          }),
    };
    out.result(result);
    this.lastFailed = result.is_error;
    return !result.is_error;
  }

  /** `--max-turns` reached by this many model calls. */
  private stoppedAtMaxTurns(rounds: number): boolean {
    return this.flags.maxTurns !== undefined && this.flags.maxTurns > 0 && rounds >= this.flags.maxTurns;
  }

  /** What the model calls of this process have cost so far (USD). */
  private spent(): number {
    let sum = 0;
    for (const entry of this.models.values()) sum += entry.costUSD;
    return sum;
  }

  /**
   * One model call into `modelUsage` and the cost: priced by the model that answered, or, when a
   * gateway answers under a name with no price, by the one asked for (`asked`).
   */
  private priceCall(message: { model?: string }, usage: AnthropicUsage, asked: string | undefined): void {
    const answered = message.model ?? this.model;
    this.addModelUsage(answered, usage, hasPrice(answered) ? answered : (asked ?? answered));
  }

  private addModelUsage(model: string, usage: AnthropicUsage, pricedAs = model): void {
    const entry = this.models.get(model) ?? {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      webSearchRequests: 0,
      costUSD: 0,
      contextWindow: this.session.getContextState()?.maxTokens ?? 0,
      maxOutputTokens: 0,
    };
    entry.inputTokens += usage.input_tokens;
    entry.outputTokens += usage.output_tokens;
    entry.cacheReadInputTokens += usage.cache_read_input_tokens;
    entry.cacheCreationInputTokens += usage.cache_creation_input_tokens;
    entry.costUSD += costUsd(pricedAs, usage);
    this.models.set(model, entry);
  }
}

function summarize(input: unknown): string {
  const text = JSON.stringify(input ?? {});
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
