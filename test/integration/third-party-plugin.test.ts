import { readFile } from 'node:fs/promises';
import { CommandContribution, type ICommandHostContext, type Message } from '@tessera/contracts';
import { createKernel, defineTool, KernelCompositionError, toolsPlugin, type Session } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { testPreset } from '@tessera/preset-test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardian } from './third-party/guardian-plugin.js';

// No back doors: what the first-party plugins use from each other is a token or a library,
// so a plugin written outside the project can approve tool calls, match permission rules
// and contribute a slash command with nothing else.

const ran: string[] = [];
const shell = defineTool({
  name: 'mcp__box__shell',
  description: 'runs a command in a box (fake)',
  inputSchema: z.object({ command: z.string() }),
  permission: { family: 'execute', subject: 'command' },
  execute: ({ command }) => (ran.push(command), { success: true, output: `ran ${command}` }),
});

function toolResults(history: readonly Message[]): string[] {
  return history.flatMap((message) => (message.role === 'tool' ? message.content.map((block) => String(block.content)) : []));
}

function hostContext(session: Session): ICommandHostContext {
  return {
    sessionId: session.sessionId,
    cwd: session.cwd,
    services: session.services,
    getHistory: () => session.getHistory() as never,
    getContextState: () => session.getContextState(),
    getModel: () => session.getModel(),
    getCommandHostAdapters: () => ({}),
  };
}

describe('a third-party plugin (contracts, kernel and libraries only)', () => {
  it('imports nothing but @tessera/contracts, @tessera/kernel and @tessera/permission-rules', async () => {
    const source = await readFile(new URL('./third-party/guardian-plugin.ts', import.meta.url), 'utf8');
    const imported = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
    expect(new Set(imported)).toEqual(new Set(['@tessera/contracts', '@tessera/kernel', '@tessera/permission-rules']));
  });

  it('approves calls matching its rules (a compound command is judged part by part), refuses the rest, and its command reports both', async () => {
    ran.length = 0;
    const turns = [
      { toolCalls: [{ id: 'a', name: 'mcp__box__shell', input: { command: 'git status' } }] },
      { toolCalls: [{ id: 'b', name: 'mcp__box__shell', input: { command: 'git status && git push --force' } }] },
      { toolCalls: [{ id: 'c', name: 'mcp__box__shell', input: { command: 'npm test' } }] },
      { text: 'done' },
    ];
    const kernel = await createKernel({
      plugins: testPreset({
        turns,
        replace: [permissionsPlugin(), guardian({ approve: ['Bash(git status)', 'Bash(npm test)'], families: { mcp__box__shell: shell.permission! }, cwd: '/work' })],
        plugins: [toolsPlugin(shell)],
      }),
    });
    const session = kernel.createSession({ cwd: '/work', permissionMode: 'default' });
    await session.run('go');
    expect(ran).toEqual(['git status', 'npm test']);
    const results = toolResults(session.getHistory());
    expect(results[0]).toBe('ran git status');
    expect(results[1]).toMatch(/not approved|denied/i);
    expect(results[2]).toBe('ran npm test');

    const command = kernel.getAll(CommandContribution).flatMap((module) => module.systemCommands ?? []).find((candidate) => candidate.name === 'guardian')!;
    const report = await command.execute(hostContext(session), '');
    expect(report.success).toBe(true);
    expect(report.message.split('\n')).toEqual([
      'approved mcp__box__shell (Bash(git status))',
      'refused mcp__box__shell',
      'approved mcp__box__shell (Bash(npm test))',
    ]);
    expect(report.data).toMatchObject({ session: session.sessionId, approved: 2, refused: 1 });
    await kernel.shutdown();
  });

  it('is one value for many kernels, each with its own decisions', async () => {
    const plugin = guardian({ approve: ['Bash(ls)'], families: { mcp__box__shell: shell.permission! }, cwd: '/work' });
    const reports: string[] = [];
    for (const command of ['ls', 'rm -rf /']) {
      const kernel = await createKernel({
        plugins: testPreset({ turns: [{ toolCalls: [{ id: 'x', name: 'mcp__box__shell', input: { command } }] }, { text: 'done' }], replace: [permissionsPlugin(), plugin], plugins: [toolsPlugin(shell)] }),
      });
      const session = kernel.createSession({ cwd: '/work' });
      await session.run('go');
      const guardianCommand = kernel.getAll(CommandContribution)[0]!.systemCommands![0]!;
      reports.push((await guardianCommand.execute(hostContext(session), '')).message);
      await kernel.shutdown();
    }
    expect(reports).toEqual(['approved mcp__box__shell (Bash(ls))', 'refused mcp__box__shell']);
  });

  it('checks its options in the factory and clashes with another command of the same name at composition', async () => {
    expect(() => guardian({ approve: ['Bash(unclosed'], cwd: '/' })).toThrow(/approve has rules it cannot read/);
    const twice = guardian({ approve: [], cwd: '/' });
    const other = { ...guardian({ approve: [], cwd: '/' }), name: 'guardian-copy', provides: [] };
    const error = await createKernel({ plugins: testPreset({ turns: [], replace: [twice], plugins: [{ ...other, register: (context) => void other.register!({ ...context, bind: ((token: symbol) => (token === CommandContribution ? context.bind(token) : { toConstantValue: () => undefined })) as never }) }] }) }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(KernelCompositionError);
    expect((error as KernelCompositionError).problems.map((problem) => problem.kind)).toContain('duplicate_command');
  });
});
