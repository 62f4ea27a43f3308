import { type ToolMessage } from '@tessera/contracts';
import { createKernel, defineTool, toolsPlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { ToolBudget } from './tool-budget.js';
import { toolBudget } from './tool-budget-plugin.js';

const note = defineTool({
  name: 'note',
  description: 'Write down a note',
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => ({ success: true, output: `noted: ${text}` }),
});

const toolResults = (history: readonly { role: string }[]): string[] =>
  history
    .filter((message): message is ToolMessage => message.role === 'tool')
    .flatMap((message) => message.content.map((result) => String(result.content)));

it('refuses tool calls once the budget is spent, and reports at shutdown', async () => {
  const reports: Array<{ refusedCalls: number }> = [];
  const kernel = await createKernel({
    plugins: testPreset({
      turns: [
        { toolCalls: [{ name: 'note', input: { text: 'a' } }, { name: 'note', input: { text: 'b' } }, { name: 'tool_budget', input: {} }] },
        { toolCalls: [{ name: 'note', input: { text: 'c' } }] },
        { text: 'Out of budget.' },
      ],
      plugins: [toolsPlugin(note), toolBudget({ maxCalls: 2, onReport: (report) => reports.push(report) })],
    }),
  });
  const session = kernel.createSession();
  expect(await session.run('Take notes.')).toBe('Out of budget.');

  expect(toolResults(session.getHistory())).toEqual([
    'noted: a',
    'noted: b',
    '0 tool calls left.',
    'Permission denied: the tool budget of 2 calls is spent',
  ]);
  await kernel.shutdown();
  expect(reports).toEqual([{ refusedCalls: 1 }]);
});

it('a test can swap the budget the guard reads: rebind it after createKernel', async () => {
  const kernel = await createKernel({
    plugins: testPreset({
      turns: [{ toolCalls: [{ name: 'note', input: { text: 'a' } }] }, { text: 'Done.' }],
      plugins: [toolsPlugin(note), toolBudget({ maxCalls: 5 })],
    }),
  });
  const noBudget: ToolBudget = { remaining: () => 0, spend: () => false, release: () => undefined, refusedCalls: 0 };
  (await kernel.rebind(ToolBudget)).toConstantValue(noBudget);

  const session = kernel.createSession();
  await session.run('Take a note.');
  expect(toolResults(session.getHistory())).toEqual(['Permission denied: the tool budget of 5 calls is spent']);
  await kernel.shutdown();
});

it('checks its options when made', () => {
  expect(() => toolBudget({ maxCalls: -1 })).toThrow(/maxCalls must be a whole number/);
});
