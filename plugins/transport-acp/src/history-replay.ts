import type * as acp from '@agentclientprotocol/sdk';
import type { Message, ToolResultBlock } from '@tessera/contracts';
import { finishedContent, planFromTodos, toolCallStart } from './acp-updates.js';

/**
 * A stored conversation as the `session/update`s a client replays on `session/load`: user
 * prompts, the assistant's thoughts and text, and each tool call with its final status and
 * content (a diff for edits, the output otherwise). System messages are not shown.
 */
export function historyUpdates(messages: readonly Message[]): acp.SessionUpdate[] {
  const results = new Map<string, ToolResultBlock>();
  for (const message of messages) if (message.role === 'tool') for (const block of message.content) results.set(block.toolUseId, block);

  const updates: acp.SessionUpdate[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      const content = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
      for (const block of content) {
        if (block.type === 'text' && block.text !== '') updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: block.text } });
        else if (block.type === 'image') updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'image', data: block.data, mimeType: block.mediaType } });
      }
    } else if (message.role === 'assistant') {
      for (const block of message.content) {
        if (block.type === 'thinking' && !block.redacted && block.thinking !== '') {
          updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: block.thinking } });
        } else if (block.type === 'text' && block.text !== '') {
          updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: block.text } });
        } else if (block.type === 'tool_use') {
          const result = results.get(block.id);
          const success = result !== undefined && !result.isError;
          const status: acp.ToolCallStatus = result === undefined ? 'failed' : success ? 'completed' : 'failed';
          updates.push({ ...toolCallStart(block.id, block.name, block.input, status), content: finishedContent(block.name, block.input, success, result) });
          const plan = planFromTodos(block.name, block.input);
          if (plan) updates.push({ sessionUpdate: 'plan', ...plan });
        }
      }
    }
  }
  return updates;
}
