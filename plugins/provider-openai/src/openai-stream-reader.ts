import type OpenAI from 'openai';
import type { AssistantMessage, ProviderRequest, ProviderUsage, StopReason } from '@tessera/contracts';

interface ToolCallState {
  id: string;
  name: string;
  args: string;
  /** The id is the server's (not one made up for a server that sent none). */
  serverId: boolean;
  /** Its arguments are forwarded to `onToolInputDelta` as they arrive. */
  streamed: boolean;
}

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

/** Reasoning text some servers stream next to `content` (DeepSeek, vLLM, LM Studio: `reasoning_content`; Ollama, OpenRouter: `reasoning`). */
type ReasoningDelta = { reasoning_content?: string | null; reasoning?: string | null };

/**
 * Folds one attempt's chunks into an assistant message, forwarding text and reasoning as they
 * arrive. Tool calls are assembled by `index`, so interleaved parallel calls come out whole.
 */
export class OpenAIStreamReader {
  delivered = false;
  finished = false;
  private text = '';
  private thinking = '';
  private readonly calls: ToolCallState[] = [];
  private finishReason: string | undefined;
  private usage: ProviderUsage | undefined;
  private id: string | undefined;
  private model: string | undefined;
  private readonly onTextDelta: ((delta: string) => void) | undefined;
  private readonly onThinkingDelta: ((delta: string) => void) | undefined;
  private readonly onToolInputDelta: ProviderRequest['onToolInputDelta'];

  constructor(
    private readonly request: ProviderRequest,
    private readonly provider: string,
  ) {
    this.onTextDelta = request.onTextDelta;
    this.onThinkingDelta = request.onThinkingDelta;
    this.onToolInputDelta = request.onToolInputDelta;
  }

  handle(chunk: OpenAI.Chat.Completions.ChatCompletionChunk): void {
    const choice = chunk.choices[0];
    if (choice !== undefined) {
      const delta = choice.delta;
      const content = delta.content;
      if (content) {
        this.text += content;
        this.delivered = true;
        this.onTextDelta?.(content);
      }
      const reasoning = (delta as ReasoningDelta).reasoning_content ?? (delta as ReasoningDelta).reasoning;
      if (reasoning) {
        this.thinking += reasoning;
        this.delivered = true;
        this.onThinkingDelta?.(reasoning);
      }
      if (delta.tool_calls !== undefined) for (const call of delta.tool_calls) this.addToolCall(call);
      if (choice.finish_reason) {
        this.finishReason = choice.finish_reason;
        this.finished = true;
      }
    }
    if (this.id === undefined) {
      this.id = chunk.id;
      this.model = chunk.model;
    }
    if (chunk.usage) {
      this.usage = {
        inputTokens: chunk.usage.prompt_tokens,
        outputTokens: chunk.usage.completion_tokens,
        ...(chunk.usage.prompt_tokens_details?.cached_tokens == null ? {} : { cacheReadTokens: chunk.usage.prompt_tokens_details.cached_tokens }),
      };
    }
  }

  /**
   * The reply so far. An interrupted reply keeps no tool calls: their arguments may be cut
   * mid-JSON, and the chunks give no per-call end marker before `finish_reason`.
   */
  toMessage(state: 'complete' | 'interrupted', requestId?: string): AssistantMessage {
    const content: AssistantMessage['content'] = [];
    if (this.thinking !== '') content.push({ type: 'thinking', thinking: this.thinking });
    if (this.text !== '') content.push({ type: 'text', text: this.text });
    if (state === 'complete') {
      for (const call of this.calls) {
        if (call === undefined) continue;
        content.push({ type: 'tool_use', id: call.id, name: call.name, input: parseArguments(call.args) });
      }
    }
    const message: AssistantMessage = {
      role: 'assistant',
      content,
      state,
      stopReason: state === 'interrupted' ? 'aborted' : (FINISH_REASONS[this.finishReason ?? ''] ?? 'end_turn'),
      provider: this.provider,
    };
    const model = this.model ?? this.request.model;
    if (model !== undefined) message.model = model;
    if (this.usage !== undefined) message.usage = this.usage;
    const metadata: Record<string, unknown> = {};
    if (this.id !== undefined) metadata.completionId = this.id;
    if (requestId !== undefined) metadata.requestId = requestId;
    if (this.finishReason !== undefined) metadata.finishReason = this.finishReason;
    if (Object.keys(metadata).length > 0) message.metadata = metadata;
    return message;
  }

  /** The whole response in Chat Completions' own shape, for `onProviderNativeRawPayload`. */
  nativeResponse(): Record<string, unknown> {
    return {
      id: this.id,
      object: 'chat.completion',
      model: this.model,
      choices: [
        {
          index: 0,
          finish_reason: this.finishReason ?? null,
          message: {
            role: 'assistant',
            content: this.text === '' ? null : this.text,
            ...(this.thinking === '' ? {} : { reasoning_content: this.thinking }),
            ...(this.calls.length === 0
              ? {}
              : { tool_calls: this.calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } })) }),
          },
        },
      ],
      usage: this.usage,
    };
  }

  private addToolCall(delta: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall): void {
    const index = delta.index ?? this.calls.length;
    let call = this.calls[index];
    if (call === undefined) {
      // Some servers omit ids; the session needs one to pair the result.
      call = { id: delta.id || `call_${index}_${Math.random().toString(36).slice(2, 10)}`, name: '', args: '', serverId: Boolean(delta.id), streamed: false };
      this.calls[index] = call;
    } else if (delta.id && call.id !== delta.id) {
      call.id = delta.id;
      call.serverId = true;
    }
    if (delta.function?.name && call.name === '') call.name = delta.function.name;
    if (delta.function?.arguments) {
      // Streamed from its first piece on, and only under the server's own id (a made-up one may
      // still be replaced) and a known name; a call that does not qualify then is never streamed.
      if (call.args === '') call.streamed = this.onToolInputDelta !== undefined && call.serverId && call.name !== '';
      call.args += delta.function.arguments;
      if (call.streamed) this.onToolInputDelta!({ toolCallId: call.id, toolName: call.name, delta: delta.function.arguments });
    }
  }
}

/** Arguments that are not JSON stay a string, so the tool's validation reports them to the model. */
function parseArguments(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}
