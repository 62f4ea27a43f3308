import type Anthropic from '@anthropic-ai/sdk';
import type { ImageBlock, Message, ProviderRequest, TextBlock, ToolSchema } from '@tessera/contracts';

type MessageParam = Anthropic.MessageParam;
type BlockParam = Anthropic.ContentBlockParam;
type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

/** Request-shaping options the provider resolved from its own options. */
export interface RequestShape {
  model: string;
  maxTokens: number;
  thinkingBudget: number | undefined;
  /** `undefined` turns prompt caching off. */
  cacheControl: CacheControl | undefined;
  webSearch: Anthropic.WebSearchTool20250305 | undefined;
}

/**
 * Builds the Messages API body for one round. Our message model maps as follows: system
 * messages and the system prompt → `system` blocks; `tool` messages → `tool_result` blocks in
 * a user message; consecutive same-role messages are merged because the API wants the roles
 * to alternate; interrupted assistant replies are sent as they are (empty ones are dropped,
 * since the API rejects an assistant turn without content).
 */
export function buildAnthropicRequest(
  request: ProviderRequest,
  shape: RequestShape,
): Anthropic.MessageCreateParamsStreaming {
  const systemTexts: string[] = [];
  if (request.system !== undefined && request.system !== '') systemTexts.push(request.system);
  const messages: MessageParam[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      if (message.content !== '') systemTexts.push(message.content);
      continue;
    }
    const converted = toMessageParam(message);
    if (converted === undefined) continue;
    const previous = messages.at(-1);
    if (previous !== undefined && previous.role === converted.role) {
      previous.content = [...asBlocks(previous.content), ...asBlocks(converted.content)];
    } else {
      messages.push(converted);
    }
  }

  const tools: Anthropic.ToolUnion[] = request.tools.map(toTool);
  if (shape.webSearch !== undefined) tools.push({ ...shape.webSearch });
  const system: Anthropic.TextBlockParam[] = systemTexts.map((text) => ({ type: 'text', text }));

  const cache = shape.cacheControl;
  if (cache !== undefined) {
    // Three breakpoints (the API allows four): the stable prefix (tools, then system) and the
    // conversation tail, so each round reads the previous round's cache and writes one more.
    const lastTool = tools.at(-1);
    if (lastTool !== undefined) (lastTool as { cache_control?: CacheControl }).cache_control = cache;
    const lastSystem = system.at(-1);
    if (lastSystem !== undefined) lastSystem.cache_control = cache;
    markTail(messages, cache);
  }

  const params: Anthropic.MessageCreateParamsStreaming = {
    model: shape.model,
    max_tokens: shape.maxTokens,
    messages,
    stream: true,
  };
  if (system.length > 0) params.system = system;
  if (tools.length > 0) params.tools = tools;
  if (shape.thinkingBudget !== undefined) params.thinking = { type: 'enabled', budget_tokens: shape.thinkingBudget };
  return params;
}

function toTool(tool: ToolSchema): Anthropic.Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.parameters } as Anthropic.Tool.InputSchema,
  };
}

function toMessageParam(message: Exclude<Message, { role: 'system' }>): MessageParam | undefined {
  switch (message.role) {
    case 'user': {
      if (typeof message.content === 'string') {
        return message.content === '' ? undefined : { role: 'user', content: message.content };
      }
      const blocks = message.content.map(toUserBlock).filter((block) => block !== undefined);
      return blocks.length === 0 ? undefined : { role: 'user', content: blocks };
    }
    case 'tool':
      return {
        role: 'user',
        content: message.content.map((block) => ({
          type: 'tool_result',
          tool_use_id: block.toolUseId,
          content:
            typeof block.content === 'string'
              ? block.content
              : block.content.map(toUserBlock).filter((part) => part !== undefined),
          is_error: block.isError,
        })),
      };
    case 'assistant': {
      const blocks: BlockParam[] = [];
      for (const block of message.content) {
        if (block.type === 'text') {
          if (block.text !== '') blocks.push({ type: 'text', text: block.text });
        } else if (block.type === 'thinking') {
          // Thinking goes back only with its signature (the API verifies it); unsigned thinking
          // (another provider's reasoning, or cut short by an abort) is dropped.
          if (block.redacted && block.signature) blocks.push({ type: 'redacted_thinking', data: block.signature });
          else if (block.signature) blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
        } else {
          blocks.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} });
        }
      }
      return blocks.length === 0 ? undefined : { role: 'assistant', content: blocks };
    }
  }
}

function toUserBlock(block: TextBlock | ImageBlock): Anthropic.TextBlockParam | Anthropic.ImageBlockParam | undefined {
  if (block.type === 'text') return block.text === '' ? undefined : { type: 'text', text: block.text };
  return {
    type: 'image',
    source: {
      type: 'base64',
      data: block.data,
      media_type: block.mediaType as Anthropic.Base64ImageSource['media_type'],
    },
  };
}

function asBlocks(content: MessageParam['content']): BlockParam[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** Puts a breakpoint on the last cacheable block of the last message. */
function markTail(messages: MessageParam[], cache: CacheControl): void {
  const last = messages.at(-1);
  if (last === undefined) return;
  last.content = asBlocks(last.content);
  for (let index = last.content.length - 1; index >= 0; index -= 1) {
    const block = last.content[index];
    if (block === undefined || block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    (block as { cache_control?: CacheControl }).cache_control = cache;
    return;
  }
}
