import { describe, expect, it } from 'vitest';
import { Session } from '@tessera/kernel';
import type { AssistantMessage, Provider, ProviderRequest } from '@tessera/contracts';
import { todoWriteTool } from './todo-write-tool.js';

const context = { signal: new AbortController().signal } as never;

describe('TodoWrite', () => {
  it('takes the whole list, summarises it for the model and hands it to UIs as data', async () => {
    const tool = todoWriteTool();
    const todos = [
      { content: 'Read the code', status: 'completed' as const, activeForm: 'Reading the code' },
      { content: 'Fix the bug', status: 'in_progress' as const, activeForm: 'Fixing the bug' },
      { content: 'Run the tests', status: 'pending' as const, activeForm: 'Running the tests', priority: 'high' as const, id: '3' },
    ];
    const result = await tool.execute({ todos }, context);
    expect(result.success).toBe(true);
    expect(result.output).toBe('The todo list is updated: 3 items (1 completed, 1 in progress, 1 pending). Keep it current: mark each item completed as soon as it is done.');
    expect(result.data).toEqual({ todos });
    const done = await tool.execute({ todos: todos.map((todo) => ({ ...todo, status: 'completed' as const })) }, context);
    expect(done.output).toBe('The todo list is updated: 3 items (3 completed, 0 in progress, 0 pending).');
    expect((await tool.execute({ todos: [] }, context)).output).toBe('The todo list is now empty.');
    const two = await tool.execute({ todos: todos.map((todo) => ({ ...todo, status: 'in_progress' as const })) }, context);
    expect(two.output).toContain('More than one item is in progress');
  });

  it('is lenient where models differ (no activeForm) and refuses a malformed list with the field named', async () => {
    const replies: AssistantMessage[] = [
      { role: 'assistant', state: 'complete', stopReason: 'tool_use', content: [{ type: 'tool_use', id: 'a', name: 'TodoWrite', input: { todos: [{ content: 'Only this', status: 'pending' }] } }] },
      { role: 'assistant', state: 'complete', stopReason: 'tool_use', content: [{ type: 'tool_use', id: 'b', name: 'TodoWrite', input: { todos: [{ content: 'x', status: 'doing' }] } }] },
      { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'ok' }] },
    ];
    const provider: Provider = { name: 'script', stream: async (_request: ProviderRequest) => replies.shift()! };
    const session = new Session({ provider, tools: [todoWriteTool()] });
    await session.run('plan it');
    const results = session
      .getHistory()
      .filter((message) => message.role === 'tool')
      .flatMap((message) => message.content);
    expect(results[0]).toMatchObject({ isError: false });
    expect(JSON.stringify(results[0])).toContain('1 item (0 completed, 0 in progress, 1 pending)');
    expect(results[1]).toMatchObject({ isError: true });
    expect(JSON.stringify(results[1])).toContain('status');
    await session.shutdown();
  });
});
