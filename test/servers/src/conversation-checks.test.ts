import { describe, expect, it } from 'vitest';
import { anthropicFrames, splitInto } from './anthropic-server.js';
import { checkAnthropicConversation, checkOpenAIConversation } from './conversation-checks.js';
import { openaiFrames } from './openai-server.js';

describe('conversation checks', () => {
  it('flags what the Messages API rejects', () => {
    expect(
      checkAnthropicConversation({
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1' }] },
          { role: 'assistant', content: [] },
          { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'tool_result', tool_use_id: 't9' }] },
        ],
      }),
    ).toEqual([
      'first message is not from the user',
      'tool_use t1 in message 0 has no tool_result in message 1',
      'message 1 (assistant) has no content',
      'messages 0 and 1 are both assistant',
    ]);
    expect(
      checkAnthropicConversation({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1' }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }, { type: 'text', text: 'next' }] },
        ],
      }),
    ).toEqual([]);
  });

  it('flags unanswered and orphan tool messages in Chat Completions', () => {
    expect(
      checkOpenAIConversation({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'a' }, { id: 'b' }] },
          { role: 'tool', tool_call_id: 'a', content: 'x' },
          { role: 'tool', tool_call_id: 'zzz', content: 'y' },
        ],
      }),
    ).toEqual(['tool call b in message 1 has no tool message after it', 'tool message 3 (zzz) answers no preceding tool call']);
  });
});

describe('frame builders', () => {
  it('emit the Messages API event sequence', () => {
    const types = anthropicFrames({ text: ['a', 'b'], toolCalls: [{ name: 't', input: { k: 1 } }] }).map((frame) => frame.split('\n')[0]);
    expect(types).toEqual([
      'event: message_start',
      'event: content_block_start',
      'event: content_block_delta',
      'event: content_block_delta',
      'event: content_block_stop',
      'event: content_block_start',
      'event: content_block_delta',
      'event: content_block_delta',
      'event: content_block_stop',
      'event: message_delta',
      'event: message_stop',
    ]);
  });

  it('emit Chat Completions chunks ending in [DONE], tool arguments reassembling to the input', () => {
    const frames = openaiFrames({ toolCalls: [{ name: 't', input: { path: 'a.ts' }, chunks: 3 }] });
    expect(frames.at(-1)).toBe('data: [DONE]\n\n');
    const args = frames
      .slice(0, -1)
      .map((frame) => JSON.parse(frame.slice(6)) as { choices: Array<{ delta: { tool_calls?: Array<{ function?: { arguments?: string } }> } }> })
      .flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])
      .map((call) => call.function?.arguments ?? '')
      .join('');
    expect(JSON.parse(args)).toEqual({ path: 'a.ts' });
    expect(splitInto('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
  });
});
