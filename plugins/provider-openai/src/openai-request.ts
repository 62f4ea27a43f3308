import type OpenAI from 'openai';
import type { ImageBlock, Message, ProviderRequest, TextBlock, ToolResultBlock } from '@tessera/contracts';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type UserPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

export interface RequestShape {
  model: string;
  maxTokens: number | undefined;
  /** Ask for a final usage chunk (`stream_options.include_usage`); some servers reject it. */
  streamUsage: boolean;
  /** Provider-specific body fields, merged last (e.g. `reasoning_effort`, `top_k`). */
  extraBody: Record<string, unknown> | undefined;
}

/**
 * Builds the Chat Completions body for one round. The system prompt leads as a `system`
 * message; each `tool_result` becomes a `tool` message; consecutive user (or assistant)
 * messages are merged because several local chat templates insist on alternation. Thinking is
 * not sent back: OpenAI-compatible servers do not accept their own reasoning as input.
 */
export function buildOpenAIRequest(request: ProviderRequest, shape: RequestShape): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined && request.system !== '') messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) {
    for (const converted of toChatMessages(message)) {
      const previous = messages.at(-1);
      if (previous !== undefined && previous.role === converted.role && (converted.role === 'user' || converted.role === 'assistant')) {
        mergeInto(previous, converted);
      } else {
        messages.push(converted);
      }
    }
  }
  const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming = { model: shape.model, messages, stream: true };
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (shape.streamUsage) params.stream_options = { include_usage: true };
  if (shape.maxTokens !== undefined) params.max_tokens = shape.maxTokens;
  if (shape.extraBody !== undefined) Object.assign(params, shape.extraBody);
  return params;
}

function toChatMessages(message: Message): ChatMessage[] {
  switch (message.role) {
    case 'system':
      return message.content === '' ? [] : [{ role: 'system', content: message.content }];
    case 'user': {
      if (typeof message.content === 'string') return message.content === '' ? [] : [{ role: 'user', content: message.content }];
      const parts = message.content.map(toUserPart).filter((part) => part !== undefined);
      return parts.length === 0 ? [] : [{ role: 'user', content: parts }];
    }
    case 'tool':
      return message.content.map((block) => ({ role: 'tool', tool_call_id: block.toolUseId, content: toolText(block) }));
    case 'assistant': {
      let text = '';
      const toolCalls: OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[] = [];
      for (const block of message.content) {
        if (block.type === 'text') text += block.text;
        else if (block.type === 'tool_use') {
          toolCalls.push({
            id: block.id,
            type: 'function',
            // Unparseable arguments were kept as the raw string; send them back as they came.
            function: { name: block.name, arguments: typeof block.input === 'string' ? block.input : JSON.stringify(block.input ?? {}) },
          });
        }
      }
      if (text === '' && toolCalls.length === 0) return [];
      const assistant: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = { role: 'assistant', content: text === '' ? null : text };
      if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
      return [assistant];
    }
  }
}

function toUserPart(block: TextBlock | ImageBlock): UserPart | undefined {
  if (block.type === 'text') return block.text === '' ? undefined : { type: 'text', text: block.text };
  return { type: 'image_url', image_url: { url: `data:${block.mediaType};base64,${block.data}` } };
}

/** Tool messages carry text only; images are named so the model knows one was there. */
function toolText(block: ToolResultBlock): string {
  const text =
    typeof block.content === 'string'
      ? block.content
      : block.content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType} omitted]`)).join('\n');
  return block.isError && !/^error/i.test(text) ? `Error: ${text}` : text;
}

function mergeInto(target: ChatMessage, source: ChatMessage): void {
  if (target.role === 'user' && source.role === 'user') {
    target.content = [...asParts(target.content), ...asParts(source.content)];
  } else if (target.role === 'assistant' && source.role === 'assistant') {
    const text = [target.content, source.content].filter((part) => typeof part === 'string' && part !== '').join('\n');
    target.content = text === '' ? null : text;
    const calls = [...(target.tool_calls ?? []), ...(source.tool_calls ?? [])];
    if (calls.length > 0) target.tool_calls = calls;
  }
}

function asParts(content: string | UserPart[]): UserPart[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}
