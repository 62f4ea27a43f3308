import { describe, expect, it } from 'vitest';
import { buildSessionContext, getPath } from './context.js';
import type { SessionEntry } from './entries.js';

let clock = 0;
const ts = (): string => new Date(Date.UTC(2026, 0, 1) + (clock += 1000)).toISOString();

function userMsg(text: string) {
  return { role: 'user', content: text, timestamp: 1 };
}
function assistantMsg(text: string, provider = 'anthropic', model = 'claude-test') {
  return { role: 'assistant', content: [{ type: 'text', text }], provider, model, stopReason: 'stop', timestamp: 1 };
}
function msg(id: string, parentId: string | null, role: 'user' | 'assistant', text: string): SessionEntry {
  return { type: 'message', id, parentId, timestamp: ts(), message: role === 'user' ? userMsg(text) : assistantMsg(text) };
}
function compaction(id: string, parentId: string, summary: string, firstKeptEntryId: string): SessionEntry {
  return { type: 'compaction', id, parentId, timestamp: ts(), summary, firstKeptEntryId, tokensBefore: 1000 };
}
function branchSummary(id: string, parentId: string, summary: string): SessionEntry {
  return { type: 'branch_summary', id, parentId, timestamp: ts(), fromId: parentId, summary };
}
const texts = (entries: SessionEntry[], leaf?: string | null): string[] =>
  buildSessionContext(entries, leaf).messages.map((message) => {
    if (typeof message.summary === 'string') return message.summary;
    const content = message.content as string | { text: string }[];
    return typeof content === 'string' ? content : (content[0]?.text ?? '');
  });

describe('buildSessionContext', () => {
  it('returns an empty context for no entries', () => {
    expect(buildSessionContext([])).toMatchObject({ messages: [], thinkingLevel: 'off', model: null, models: {}, mode: 'none' });
  });

  it('returns an empty context for a null leaf', () => {
    expect(buildSessionContext([msg('1', null, 'user', 'hi')], null).messages).toEqual([]);
  });

  it('passes a single user message through', () => {
    expect(buildSessionContext([msg('1', null, 'user', 'hi')]).messages).toHaveLength(1);
  });

  it('keeps a linear conversation in order', () => {
    const entries = [msg('1', null, 'user', 'a'), msg('2', '1', 'assistant', 'b'), msg('3', '2', 'user', 'c'), msg('4', '3', 'assistant', 'd')];
    expect(buildSessionContext(entries).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('takes the thinking level from the path', () => {
    const entries: SessionEntry[] = [
      msg('1', null, 'user', 'a'),
      { type: 'thinking_level_change', id: '2', parentId: '1', timestamp: ts(), thinkingLevel: 'high' },
      msg('3', '2', 'assistant', 'b'),
    ];
    const context = buildSessionContext(entries);
    expect(context.thinkingLevel).toBe('high');
    expect(context.messages).toHaveLength(2);
  });

  it('falls back to the assistant message model', () => {
    const context = buildSessionContext([msg('1', null, 'user', 'a'), msg('2', '1', 'assistant', 'b')]);
    expect(context.model).toEqual({ provider: 'anthropic', modelId: 'claude-test' });
    expect(context.models).toEqual({ default: 'anthropic/claude-test' });
  });

  it('lets an explicit model_change win over the answering model (omp semantics)', () => {
    const entries: SessionEntry[] = [
      msg('1', null, 'user', 'a'),
      { type: 'model_change', id: '2', parentId: '1', timestamp: ts(), model: 'openai/gpt-4' },
      msg('3', '2', 'assistant', 'b'),
    ];
    expect(buildSessionContext(entries).models.default).toBe('openai/gpt-4');
    expect(buildSessionContext(entries).model).toEqual({ provider: 'openai', modelId: 'gpt-4' });
  });

  it('reads pi-dialect model changes and keeps roles apart', () => {
    const entries: SessionEntry[] = [
      { type: 'model_change', id: '1', parentId: null, timestamp: ts(), provider: 'openai', modelId: 'gpt-4' },
      { type: 'model_change', id: '2', parentId: '1', timestamp: ts(), model: 'anthropic/haiku', role: 'smol' },
    ];
    expect(buildSessionContext(entries).models).toEqual({ default: 'openai/gpt-4', smol: 'anthropic/haiku' });
  });

  it('emits the summary and the kept entries of a compaction', () => {
    const entries = [
      msg('1', null, 'user', 'first'),
      msg('2', '1', 'assistant', 'response1'),
      msg('3', '2', 'user', 'second'),
      msg('4', '3', 'assistant', 'response2'),
      compaction('5', '4', 'summary', '3'),
      msg('6', '5', 'user', 'third'),
      msg('7', '6', 'assistant', 'response3'),
    ];
    expect(texts(entries)).toEqual(['summary', 'second', 'response2', 'third', 'response3']);
    expect(buildSessionContext(entries).messages[0]).toMatchObject({ role: 'compactionSummary', tokensBefore: 1000 });
  });

  it('keeps everything from the first entry when it is the kept one', () => {
    const entries = [msg('1', null, 'user', 'a'), msg('2', '1', 'assistant', 'b'), compaction('3', '2', 's', '1'), msg('4', '3', 'user', 'c')];
    expect(buildSessionContext(entries).messages).toHaveLength(4);
  });

  it('applies only the last compaction on the path', () => {
    const entries = [
      msg('1', null, 'user', 'a'),
      msg('2', '1', 'assistant', 'b'),
      compaction('3', '2', 'First summary', '1'),
      msg('4', '3', 'user', 'c'),
      msg('5', '4', 'assistant', 'd'),
      compaction('6', '5', 'Second summary', '4'),
      msg('7', '6', 'user', 'e'),
    ];
    const result = texts(entries);
    expect(result).toHaveLength(4);
    expect(result[0]).toBe('Second summary');
  });

  it('keeps nothing before the compaction when the kept id is not on the path', () => {
    const entries = [msg('1', null, 'user', 'a'), msg('2', '1', 'assistant', 'b'), compaction('3', '2', 's', 'elsewhere'), msg('4', '3', 'user', 'c')];
    expect(texts(entries)).toEqual(['s', 'c']);
  });

  it('follows the selected branch', () => {
    const entries = [msg('1', null, 'user', 'start'), msg('2', '1', 'assistant', 'r'), msg('3', '2', 'user', 'branch A'), msg('4', '2', 'user', 'branch B')];
    expect(texts(entries, '3').at(-1)).toBe('branch A');
    expect(texts(entries, '4').at(-1)).toBe('branch B');
  });

  it('turns a branch summary into a message', () => {
    const entries = [msg('1', null, 'user', 'a'), msg('2', '1', 'assistant', 'b'), msg('3', '2', 'user', 'abandoned'), branchSummary('4', '2', 'tried X'), msg('5', '4', 'user', 'new direction')];
    const context = buildSessionContext(entries, '5');
    expect(context.messages).toHaveLength(4);
    expect(context.messages[2]).toMatchObject({ role: 'branchSummary', summary: 'tried X', fromId: '2' });
    expect(texts(entries, '5')[3]).toBe('new direction');
  });

  it('combines compaction and branches', () => {
    const entries = [
      msg('1', null, 'user', 'start'),
      msg('2', '1', 'assistant', 'r1'),
      msg('3', '2', 'user', 'q2'),
      msg('4', '3', 'assistant', 'r2'),
      compaction('5', '4', 'summary', '3'),
      msg('6', '5', 'user', 'q3'),
      msg('7', '6', 'assistant', 'r3'),
      msg('8', '3', 'user', 'wrong'),
      msg('9', '8', 'assistant', 'oops'),
      branchSummary('10', '3', 'summary'),
      msg('11', '10', 'user', 'better approach'),
    ];
    expect(texts(entries, '7')).toEqual(['summary', 'q2', 'r2', 'q3', 'r3']);
    expect(texts(entries, '11')).toEqual(['start', 'r1', 'q2', 'summary', 'better approach']);
  });

  it('uses the last entry for an unknown leaf', () => {
    expect(buildSessionContext([msg('1', null, 'user', 'a'), msg('2', '1', 'assistant', 'b')], 'nope').messages).toHaveLength(2);
  });

  it('stops at a missing parent', () => {
    expect(buildSessionContext([msg('1', 'missing', 'user', 'orphan')]).messages).toHaveLength(1);
  });

  it('terminates on a cycle and on a self-parented entry', () => {
    const cycle = [msg('a', 'b', 'user', 'x'), msg('b', 'a', 'assistant', 'y')];
    expect(buildSessionContext(cycle, 'b').messages).toHaveLength(2);
    expect(buildSessionContext([msg('s', 's', 'user', 'self')]).messages).toHaveLength(1);
  });

  it('getPath ends a cycle that does not pass through the leaf at the first repeated id', () => {
    // leaf → a → b → c → a … : the walk must stop before visiting a again.
    const entries = [msg('a', 'c', 'user', '1'), msg('b', 'a', 'user', '2'), msg('c', 'b', 'user', '3'), msg('leaf', 'a', 'user', '4')];
    const byId = new Map(entries.map((entry) => [entry.id, entry]));
    expect(getPath(byId.get('leaf') as SessionEntry, byId).map((entry) => entry.id)).toEqual(['b', 'c', 'a', 'leaf']);
    expect(getPath(byId.get('b') as SessionEntry, byId).map((entry) => entry.id)).toEqual(['c', 'a', 'b']);
  });

  it('getPath stops before an entry that shares the leaf id (leaf not the indexed one)', () => {
    const stale = msg('x', 'p', 'user', 'stale');
    const entries = [msg('r', null, 'user', 'root'), msg('x', 'r', 'user', 'indexed'), msg('p', 'x', 'user', 'p')];
    const byId = new Map(entries.map((entry) => [entry.id, entry]));
    expect(getPath(stale, byId).map((entry) => entry.id)).toEqual(['p', 'x']);
    expect(getPath(stale, byId)[1]).toBe(stale);
  });

  it('handles a 100,000-deep chain without quadratic path building', () => {
    const entries: SessionEntry[] = [];
    for (let index = 0; index < 100_000; index += 1) entries.push(msg(`e${index}`, index === 0 ? null : `e${index - 1}`, index % 2 ? 'assistant' : 'user', 't'));
    const context = buildSessionContext(entries);
    expect(context.messages).toHaveLength(100_000);
  });

  it('derives rules, mode and custom messages; skips custom, label and session_init entries', () => {
    const entries: SessionEntry[] = [
      msg('1', null, 'user', 'a'),
      { type: 'ttsr_injection', id: '2', parentId: '1', timestamp: ts(), injectedRules: ['r1', 'r2'] },
      { type: 'ttsr_injection', id: '3', parentId: '2', timestamp: ts(), injectedRules: ['r2', 'r3'] },
      { type: 'mode_change', id: '4', parentId: '3', timestamp: ts(), mode: 'plan', data: { planFile: '/tmp/p.md' } },
      { type: 'custom', id: '5', parentId: '4', timestamp: ts(), customType: 'ext', data: { n: 1 } },
      { type: 'session_init', id: '6', parentId: '5', timestamp: '2026-02-16T10:29:00.000Z', systemPrompt: 's', tools: ['read'] },
      { type: 'label', id: '7', parentId: '6', timestamp: ts(), targetId: '1', label: 'cp' },
      { type: 'custom_message', id: '8', parentId: '7', timestamp: '2026-02-16T10:26:00.000Z', customType: 'ext', content: 'Injected', display: true, details: { d: 1 } },
    ];
    const context = buildSessionContext(entries);
    expect(context.injectedTtsrRules).toEqual(['r1', 'r2', 'r3']);
    expect(context.mode).toBe('plan');
    expect(context.modeData).toEqual({ planFile: '/tmp/p.md' });
    expect(context.messages).toHaveLength(2);
    expect(context.messages[1]).toEqual({
      role: 'custom',
      customType: 'ext',
      content: 'Injected',
      display: true,
      details: { d: 1 },
      timestamp: Date.parse('2026-02-16T10:26:00.000Z'),
    });
  });
});
