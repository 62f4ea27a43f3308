import {
  TesseraError,
  type AssistantMessage,
  type Message,
  type Provider,
  type ProviderRequest,
  type ProviderUsage,
  type TextBlock,
  type ThinkingBlock,
  type ToolSchema,
  type ToolUseBlock,
} from '@tessera/contracts';

export interface ScriptedToolCall {
  id?: string;
  name: string;
  input: unknown;
}

/** One scripted model reply. */
export interface ScriptedTurn {
  /** Streamed as deltas: a string is one delta, an array is one delta per element. */
  text?: string | readonly string[];
  toolCalls?: readonly ScriptedToolCall[];
  /** A thinking block, streamed as one thinking delta before the text. */
  thinking?: string;
  usage?: ProviderUsage;
  /** Wait this long before each delta (and before replying when there is no text). */
  delayMs?: number;
  /** Reject the call with this error instead of replying (after streaming `text`, if any). */
  error?: Error | string;
}

/** What a turn function sees: the request, plus how many calls came before it. */
export interface ScriptedRequest {
  messages: readonly Message[];
  system: string | undefined;
  tools: readonly ToolSchema[];
  model: string | undefined;
  /** The request's hosted-tool switches, when it set any. */
  nativeTools?: { webSearch?: boolean };
  /** 0 for the first call to this provider. */
  index: number;
}

export type ScriptedTurnSource = ScriptedTurn | ((request: ScriptedRequest) => ScriptedTurn | Promise<ScriptedTurn>);

export interface ScriptedProviderOptions {
  /** Played in order, one per call; or one function answering every call. */
  turns?: readonly ScriptedTurnSource[] | ((request: ScriptedRequest) => ScriptedTurn | Promise<ScriptedTurn>);
  name?: string;
  model?: string;
  /** Keep a copy of every request in `requests` (default true). */
  recordRequests?: boolean;
}

export class ScriptedProviderExhaustedError extends TesseraError {
  constructor(calls: number, turns: number) {
    super(
      `Scripted provider received call ${calls + 1} but was given only ${turns} turn(s); add more turns or pass a function.`,
      { code: 'scripted_turns_exhausted', category: 'provider', recoverable: false, details: { calls, turns } },
    );
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * A deterministic model for tests and demos: plays scripted turns, streams their text as
 * deltas, records what it was asked, and stops mid-stream on abort with the partial reply.
 */
export class ScriptedProvider implements Provider {
  readonly name: string;
  readonly model: string;
  /** Copies of the requests received, in order (when `recordRequests` is on). */
  readonly requests: ScriptedRequest[] = [];
  private calls = 0;
  private readonly turns: ScriptedProviderOptions['turns'];
  private readonly record: boolean;

  constructor(options: ScriptedProviderOptions = {}) {
    this.name = options.name ?? 'scripted';
    this.model = options.model ?? 'scripted-model';
    this.turns = options.turns ?? [];
    this.record = options.recordRequests ?? true;
  }

  /** Number of `stream()` calls so far. */
  get callCount(): number {
    return this.calls;
  }

  async stream(request: ProviderRequest): Promise<AssistantMessage> {
    const index = this.calls++;
    const view: ScriptedRequest = {
      messages: request.messages,
      system: request.system,
      tools: request.tools,
      model: request.model,
      ...(request.nativeTools ? { nativeTools: request.nativeTools } : {}),
      index,
    };
    if (this.record) this.requests.push({ ...view, messages: [...request.messages], tools: [...request.tools] });

    const turn = await this.nextTurn(view, index);
    const { signal } = request;
    const chunks = turn.text === undefined ? [] : typeof turn.text === 'string' ? [turn.text] : turn.text;
    const delay = turn.delayMs ?? 0;
    let text = '';
    let thinking: ThinkingBlock | undefined;
    if (turn.thinking !== undefined) {
      thinking = { type: 'thinking', thinking: turn.thinking };
      // Streamed first, as a thinking model streams its reasoning before the answer.
      request.onThinkingDelta?.(turn.thinking);
    }

    if (chunks.length === 0 && delay > 0) await sleep(delay, signal);
    for (const chunk of chunks) {
      if (delay > 0) await sleep(delay, signal);
      if (signal.aborted) return this.reply(thinking, text, [], 'interrupted', turn.usage);
      text += chunk;
      request.onTextDelta?.(chunk);
    }
    if (signal.aborted) return this.reply(thinking, text, [], 'interrupted', turn.usage);
    if (turn.error !== undefined) throw typeof turn.error === 'string' ? new Error(turn.error) : turn.error;

    const calls: ToolUseBlock[] = (turn.toolCalls ?? []).map((call, position) => ({
      type: 'tool_use',
      id: call.id ?? `toolu_${index}_${position}`,
      name: call.name,
      input: call.input,
    }));
    return this.reply(thinking, text, calls, 'complete', turn.usage);
  }

  private async nextTurn(view: ScriptedRequest, index: number): Promise<ScriptedTurn> {
    const turns = this.turns;
    if (typeof turns === 'function') return turns(view);
    const source = turns?.[index];
    if (source === undefined) throw new ScriptedProviderExhaustedError(index, turns?.length ?? 0);
    return typeof source === 'function' ? source(view) : source;
  }

  private reply(
    thinking: ThinkingBlock | undefined,
    text: string,
    calls: ToolUseBlock[],
    state: AssistantMessage['state'],
    usage: ProviderUsage | undefined,
  ): AssistantMessage {
    const content: Array<TextBlock | ThinkingBlock | ToolUseBlock> = [];
    if (thinking) content.push(thinking);
    if (text !== '') content.push({ type: 'text', text });
    for (const call of calls) content.push(call);
    return {
      role: 'assistant',
      content,
      state,
      stopReason: state === 'interrupted' ? 'aborted' : calls.length > 0 ? 'tool_use' : 'end_turn',
      provider: this.name,
      model: this.model,
      ...(usage ? { usage } : {}),
    };
  }
}
