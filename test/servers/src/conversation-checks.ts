/**
 * Structural checks a real API applies to a request's conversation, for tests to assert that
 * what a client sent would be accepted. Each returns a list of problems (empty = valid).
 */

interface AnthropicBlock {
  type: string;
  id?: string;
  tool_use_id?: string;
  text?: string;
}
interface AnthropicMessage {
  role: string;
  content: string | AnthropicBlock[];
}

/** Messages API rules: starts with user, roles alternate, no empty turns, every tool_use answered next turn. */
export function checkAnthropicConversation(body: unknown): string[] {
  const problems: string[] = [];
  const messages = ((body as { messages?: AnthropicMessage[] }).messages ?? []) as AnthropicMessage[];
  if (messages[0]?.role !== 'user') problems.push('first message is not from the user');
  messages.forEach((message, index) => {
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (blocks.length === 0) problems.push(`message ${index} (${message.role}) has no content`);
    for (const block of blocks) {
      if (block.type === 'text' && block.text === '') problems.push(`message ${index} has an empty text block`);
    }
    if (index > 0 && messages[index - 1]?.role === message.role) problems.push(`messages ${index - 1} and ${index} are both ${message.role}`);
    if (message.role !== 'assistant') return;
    const calls = blocks.filter((block) => block.type === 'tool_use').map((block) => block.id);
    if (calls.length === 0) return;
    const next = messages[index + 1];
    if (next === undefined) {
      problems.push(`tool_use in message ${index} is the last message`);
      return;
    }
    const nextBlocks = typeof next.content === 'string' ? [] : next.content;
    const answered = new Set(nextBlocks.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id));
    for (const id of calls) if (!answered.has(id)) problems.push(`tool_use ${id} in message ${index} has no tool_result in message ${index + 1}`);
    const firstOther = nextBlocks.findIndex((block) => block.type !== 'tool_result');
    const lastResult = nextBlocks.map((block) => block.type).lastIndexOf('tool_result');
    if (firstOther !== -1 && firstOther < lastResult) problems.push(`message ${index + 1} has tool_result blocks after other content`);
  });
  return problems;
}

interface OpenAIMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string }>;
  tool_call_id?: string;
}

/** Chat Completions rules: every assistant tool call is answered by `tool` messages right after it, and no orphan results. */
export function checkOpenAIConversation(body: unknown): string[] {
  const problems: string[] = [];
  const messages = ((body as { messages?: OpenAIMessage[] }).messages ?? []) as OpenAIMessage[];
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      const hasContent = typeof message.content === 'string' ? message.content !== '' : message.content != null;
      if (!hasContent && (message.tool_calls?.length ?? 0) === 0) problems.push(`assistant message ${index} has neither content nor tool_calls`);
      const pending = new Set((message.tool_calls ?? []).map((call) => call.id));
      let next = index + 1;
      while (messages[next]?.role === 'tool') {
        pending.delete(messages[next]!.tool_call_id ?? '');
        next += 1;
      }
      for (const id of pending) problems.push(`tool call ${id} in message ${index} has no tool message after it`);
    }
    if (message.role === 'tool') {
      let previous = index - 1;
      while (messages[previous]?.role === 'tool') previous -= 1;
      const owner = messages[previous];
      if (owner?.role !== 'assistant' || !(owner.tool_calls ?? []).some((call) => call.id === message.tool_call_id)) {
        problems.push(`tool message ${index} (${message.tool_call_id}) answers no preceding tool call`);
      }
    }
  });
  return problems;
}
