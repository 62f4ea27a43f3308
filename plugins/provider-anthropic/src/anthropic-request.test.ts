import type { Message, ProviderRequest } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { buildAnthropicRequest, type RequestShape } from './anthropic-request.js';

const shape: RequestShape = {
  model: 'claude-sonnet-4-6',
  maxTokens: 1000,
  thinkingBudget: undefined,
  cacheControl: { type: 'ephemeral' },
  webSearch: undefined,
};

function build(messages: Message[], extra: Partial<ProviderRequest> = {}, overrides: Partial<RequestShape> = {}) {
  return buildAnthropicRequest(
    { messages, tools: [], signal: new AbortController().signal, ...extra },
    { ...shape, ...overrides },
  );
}

const tools = [
  { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'grep', description: 'Search', parameters: { type: 'object', properties: {} } },
];

describe('buildAnthropicRequest', () => {
  it('puts cache breakpoints on the last tool, the system prompt and the conversation tail', () => {
    const params = build([{ role: 'user', content: 'hi' }], { system: 'You are terse.', tools });
    expect(params.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }]);
    expect(params.tools).toEqual([
      { name: 'read', description: 'Read a file', input_schema: tools[0]!.parameters },
      { name: 'grep', description: 'Search', input_schema: tools[1]!.parameters, cache_control: { type: 'ephemeral' } },
    ]);
    expect(params.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]);
  });

  it('sends no cache_control when caching is off, and the TTL when one is set', () => {
    const off = build([{ role: 'user', content: 'hi' }], { system: 's', tools }, { cacheControl: undefined });
    expect(JSON.stringify(off)).not.toContain('cache_control');
    const hour = build([{ role: 'user', content: 'hi' }], { system: 's' }, { cacheControl: { type: 'ephemeral', ttl: '1h' } });
    expect(hour.system).toEqual([{ type: 'text', text: 's', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
  });

  it('maps tool calls and results, merging the results with a following user message', () => {
    const params = build(
      [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          state: 'complete',
          content: [
            { type: 'thinking', thinking: 'plan', signature: 'sig' },
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool_result', toolUseId: 't1', toolName: 'read', content: 'file body', isError: false }],
        },
        { role: 'user', content: 'and then?' },
      ],
      {},
      { cacheControl: undefined },
    );
    expect(params.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'plan', signature: 'sig' },
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'file body', is_error: false },
          { type: 'text', text: 'and then?' },
        ],
      },
    ]);
  });

  it('sends an interrupted reply as it is, drops empty ones and unsigned thinking, and keeps roles alternating', () => {
    const params = build(
      [
        { role: 'user', content: 'first' },
        { role: 'assistant', state: 'interrupted', stopReason: 'aborted', content: [] },
        { role: 'user', content: 'second' },
        {
          role: 'assistant',
          state: 'interrupted',
          stopReason: 'aborted',
          content: [
            { type: 'thinking', thinking: 'half a thou' },
            { type: 'text', text: 'Partial ans' },
          ],
        },
        { role: 'user', content: 'third' },
      ],
      {},
      { cacheControl: undefined },
    );
    expect(params.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'first' }, { type: 'text', text: 'second' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Partial ans' }] },
      { role: 'user', content: 'third' },
    ]);
  });

  it('moves system messages into the system prompt and maps images and error results', () => {
    const params = build(
      [
        { role: 'system', content: 'Summary of earlier work.' },
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', data: 'AAAA', mediaType: 'image/png' }] },
        { role: 'assistant', state: 'complete', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] },
        { role: 'tool', content: [{ type: 'tool_result', toolUseId: 't', toolName: 'x', content: [{ type: 'text', text: 'boom' }], isError: true }] },
      ],
      { system: 'Base.' },
      { cacheControl: undefined, thinkingBudget: 2048 },
    );
    expect(params.system).toEqual([
      { type: 'text', text: 'Base.' },
      { type: 'text', text: 'Summary of earlier work.' },
    ]);
    expect(params.messages[0]!.content).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image', source: { type: 'base64', data: 'AAAA', media_type: 'image/png' } },
    ]);
    expect(params.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'boom' }], is_error: true },
    ]);
    expect(params.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('adds the hosted web search tool after the function tools', () => {
    const params = build([{ role: 'user', content: 'q' }], { tools: tools.slice(0, 1) }, {
      cacheControl: undefined,
      webSearch: { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    });
    expect(params.tools?.map((tool) => (tool as { name: string }).name)).toEqual(['read', 'web_search']);
    expect(params.tools?.[1]).toEqual({ type: 'web_search_20250305', name: 'web_search', max_uses: 3 });
  });
});
