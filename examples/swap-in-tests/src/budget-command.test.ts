import { createKernel, defineTool, InteractiveSession, toolsPlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { budgetCommand } from './budget-command.js';
import { toolBudget } from './tool-budget-plugin.js';

const note = defineTool({
  name: 'note',
  description: 'Write down a note',
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => ({ success: true, output: `noted: ${text}` }),
});

it('/budget shows what is left after a turn used some of it', async () => {
  const kernel = await createKernel({
    plugins: testPreset({
      turns: [{ toolCalls: [{ name: 'note', input: { text: 'a' } }] }, { text: 'Noted.' }],
      plugins: [toolsPlugin(note), toolBudget({ maxCalls: 3 }), budgetCommand()],
    }),
  });
  const session = new InteractiveSession({ kernel });
  await session.submit('Take a note.');

  expect(await session.executeCommand('/budget')).toMatchObject({ success: true, message: '2 tool calls left in this session.', data: { remaining: 2 } });
  expect(await session.executeCommand('budget', 'now')).toMatchObject({ success: false, message: '"now" is not an argument of /budget.\nUsage: /budget' });
  expect(session.listCommands().map((command) => command.name)).toContain('budget');
  await session.shutdown();
  await kernel.shutdown();
});

it('says what to compose when no tool budget is there', async () => {
  const kernel = await createKernel({ plugins: testPreset({ plugins: [budgetCommand()] }) });
  const session = new InteractiveSession({ kernel });

  expect(await session.executeCommand('budget')).toMatchObject({ success: false, message: '/budget needs a tool budget (compose toolBudget()), which this host does not offer.' });
  await session.shutdown();
  await kernel.shutdown();
});
