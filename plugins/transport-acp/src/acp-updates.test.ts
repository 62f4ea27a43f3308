import type { Message } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { approvalAnswer, permissionRequest } from './acp-permissions.js';
import { planFromTodos, toolCallStart, toolKind, toolTitle } from './acp-updates.js';
import { historyUpdates } from './history-replay.js';
import { parseSlashCommand, promptText } from './prompt-content.js';

// The wire format's mapping functions, pinned by golden files: a change to what an editor
// receives shows up as a diff in `__golden__/`.

const conversation: Message[] = [
  { role: 'system', content: 'You are Tessera.' },
  { role: 'user', content: 'Rename the greeting and add a note' },
  {
    role: 'assistant',
    state: 'complete',
    content: [
      { type: 'thinking', thinking: 'Edit then write.' },
      { type: 'text', text: 'Editing the greeting.' },
      { type: 'tool_use', id: 'edit-1', name: 'Edit', input: { file_path: '/w/a.ts', old_string: 'hello', new_string: 'hi' } },
      { type: 'tool_use', id: 'bash-1', name: 'Bash', input: { command: 'npm test\nnpm run lint', description: 'Run the tests' } },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool_result', toolUseId: 'edit-1', toolName: 'Edit', content: 'The file /w/a.ts has been updated.', isError: false },
      { type: 'tool_result', toolUseId: 'bash-1', toolName: 'Bash', content: [{ type: 'text', text: 'exit 1: 2 failing' }], isError: true },
    ],
  },
  {
    role: 'assistant',
    state: 'complete',
    content: [
      { type: 'tool_use', id: 'write-1', name: 'Write', input: { file_path: '/w/NOTE.md', content: '# Note\n' } },
      { type: 'tool_use', id: 'todo-1', name: 'TodoWrite', input: { todos: [{ content: 'Fix the tests', status: 'in_progress' }, { content: 'Ship', status: 'pending', priority: 'low' }] } },
    ],
  },
  { role: 'tool', content: [{ type: 'tool_result', toolUseId: 'write-1', toolName: 'Write', content: 'File created', isError: false }] },
  { role: 'assistant', state: 'complete', content: [{ type: 'text', text: 'Done; the tests still fail.' }] },
];

describe('history replay', () => {
  it('maps a stored conversation to session updates (golden)', async () => {
    await expect(JSON.stringify(historyUpdates(conversation), null, 2) + '\n').toMatchFileSnapshot('./__golden__/history-updates.json');
  });
});

describe('tool calls', () => {
  it('titles, kinds and content for the built-in tools (golden)', async () => {
    const calls = [
      toolCallStart('1', 'Read', { file_path: '/w/a.ts', offset: 10 }),
      toolCallStart('2', 'MultiEdit', { file_path: '/w/a.ts', edits: [{ old_string: 'a', new_string: 'b' }, { old_string: 'c', new_string: 'd' }] }),
      toolCallStart('3', 'Grep', { pattern: 'TODO', path: '/w/src' }),
      toolCallStart('4', 'WebFetch', { url: 'https://example.com' }),
      toolCallStart('5', 'mcp__github__search', { query: 'x' }),
    ];
    await expect(JSON.stringify(calls, null, 2) + '\n').toMatchFileSnapshot('./__golden__/tool-calls.json');
  });

  it('knows the kinds of the built-in tools and calls the rest other', () => {
    expect(['Read', 'Edit', 'Bash', 'Glob', 'WebSearch', 'Task', 'mcp__x__y'].map(toolKind)).toEqual(['read', 'edit', 'execute', 'search', 'fetch', 'think', 'other']);
    expect(toolTitle('Bash', { command: 'x'.repeat(200) })).toHaveLength('Bash: '.length + 80);
  });

  it('reads TodoWrite as a plan and nothing else', () => {
    expect(planFromTodos('TodoWrite', { todos: [{ content: 'A', status: 'completed' }, { status: 'pending' }] })).toEqual({ entries: [{ content: 'A', status: 'completed', priority: 'medium' }] });
    expect(planFromTodos('Write', { todos: [] })).toBeUndefined();
  });
});

describe('permissions', () => {
  const request = { toolName: 'Bash', input: { command: 'rm -rf build' }, sessionId: 's', toolCallId: 'c', suggestedRule: 'Bash(rm -rf build)', signal: new AbortController().signal };

  it('asks with the tool call and allow once / always / reject', () => {
    const asked = permissionRequest('s', request);
    expect(asked.toolCall).toMatchObject({ toolCallId: 'c', title: 'Bash: rm -rf build', kind: 'execute', status: 'pending' });
    expect(asked.options.map((option) => [option.optionId, option.kind, option.name])).toEqual([
      ['allow_once', 'allow_once', 'Allow'],
      ['allow_always', 'allow_always', 'Always allow Bash(rm -rf build) in this session'],
      ['reject_once', 'reject_once', 'Reject'],
    ]);
  });

  it('maps the answer: once → true, always → allow-session, reject / cancelled / unknown → deny', () => {
    expect(approvalAnswer({ outcome: { outcome: 'selected', optionId: 'allow_once' } })).toBe(true);
    expect(approvalAnswer({ outcome: { outcome: 'selected', optionId: 'allow_always' } })).toBe('allow-session');
    expect(approvalAnswer({ outcome: { outcome: 'selected', optionId: 'reject_once' } })).toMatchObject({ behavior: 'deny' });
    expect(approvalAnswer({ outcome: { outcome: 'cancelled' } })).toMatchObject({ behavior: 'deny', message: expect.stringContaining('cancelled') });
    expect(approvalAnswer({ outcome: { outcome: 'selected', optionId: 'maybe' } })).toMatchObject({ behavior: 'deny', message: expect.stringContaining('"maybe"') });
  });
});

describe('prompt content', () => {
  it('joins text, embedded context and resource links', () => {
    expect(
      promptText([
        { type: 'text', text: 'Explain' },
        { type: 'resource', resource: { uri: 'file:///w/a.ts', text: 'const a = 1;' } },
        { type: 'resource_link', name: 'b.ts', uri: 'file:///w/b.ts' },
      ]),
    ).toBe('Explain\n<context uri="file:///w/a.ts">\nconst a = 1;\n</context>\n[b.ts](file:///w/b.ts)');
    expect(() => promptText([{ type: 'resource', resource: { uri: 'file:///x.png', blob: 'AAAA' } }])).toThrow('binary resource file:///x.png');
  });

  it('finds a slash command only at the start', () => {
    expect(parseSlashCommand('/rename  my work ')).toEqual({ name: 'rename', args: 'my work' });
    expect(parseSlashCommand('/plugin:deploy staging')).toEqual({ name: 'plugin:deploy', args: 'staging' });
    expect(parseSlashCommand('/usr/bin/env is where?')).toBeUndefined();
    expect(parseSlashCommand('please /help')).toBeUndefined();
    expect(parseSlashCommand('/')).toBeUndefined();
  });
});
