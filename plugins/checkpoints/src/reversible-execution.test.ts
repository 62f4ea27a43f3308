import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EditCheckpoints, SandboxPaths, type Tool } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, toolsPlugin, type Kernel } from '@tessera/kernel';
import { kernelWith, resultText, tempWorkspace, toolResults, toolTurn } from './checkpoints.test-helper.js';
import { editCheckpoints } from './edit-checkpoints-plugin.js';
import { agentRunsInWorktrees, reversibilityOf } from './reversible-classification.js';
import { reversibleExecution } from './reversible-execution-plugin.js';

let dir: string;
let cleanup: () => Promise<void>;
let kernel: Kernel | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempWorkspace());
});

afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await cleanup();
});

const file = (name: string) => join(dir, name);

/** Runs one prompt making `calls` and returns each call's result as [isError, text]. */
async function runCalls(plugins: Parameters<typeof kernelWith>[1], calls: Array<{ name: string; input: unknown }>, options: { turn?: boolean } = {}) {
  kernel = await kernelWith(toolTurn(...calls), plugins);
  const session = kernel.createSession({ cwd: dir });
  const checkpoints = session.services.getOptional(EditCheckpoints);
  if (options.turn) await checkpoints?.beginTurn(session, 'go');
  await session.run('go');
  if (options.turn) await checkpoints?.finalizeTurn(session.sessionId);
  return toolResults(session.getHistory()).map((block) => [block.isError, resultText(block)] as const);
}

describe('reversibleExecution: local-first', () => {
  it('always allows Read, blocks Bash without isolation and Write without checkpoints, saying what would allow them', async () => {
    await writeFile(file('a.txt'), 'a\n');
    const results = await runCalls(
      [reversibleExecution({ mode: 'local-first' })],
      [
        { name: 'Read', input: { file_path: file('a.txt') } },
        { name: 'Bash', input: { command: 'touch made-by-bash' } },
        { name: 'Bash', input: { command: 'sleep 1', run_in_background: true } },
        { name: 'Write', input: { file_path: file('b.txt'), content: 'b\n' } },
      ],
    );
    expect(results[0]?.[0]).toBe(false);
    expect(results[1]).toEqual([true, expect.stringContaining('Run with a worktree or sandbox isolation to allow Bash in local-first mode')]);
    expect(results[1]?.[1]).toMatch(/^Blocked by reversible-execution: Reversible execution \(local-first\)/);
    expect(results[2]).toEqual([true, expect.stringContaining('Bash starts a background process')]);
    expect(results[3]).toEqual([true, expect.stringContaining('Add editCheckpoints() to allow Write')]);
    expect(existsSync(file('made-by-bash'))).toBe(false);
    expect(existsSync(file('b.txt'))).toBe(false);
  });

  it('allows Write when edit checkpoints record the turn, and captures it', async () => {
    const results = await runCalls(
      [editCheckpoints(), reversibleExecution({ mode: 'local-first' })],
      [{ name: 'Write', input: { file_path: file('b.txt'), content: 'b\n' } }],
      { turn: true },
    );
    expect(results).toEqual([[false, expect.any(String)]]);
    expect(await readFile(file('b.txt'), 'utf8')).toBe('b\n');
  });

  it('blocks Write when checkpoints are composed but no turn is open', async () => {
    const results = await runCalls(
      [editCheckpoints(), reversibleExecution({ mode: 'local-first' })],
      [{ name: 'Write', input: { file_path: file('b.txt'), content: 'b\n' } }],
    );
    expect(results).toEqual([[true, expect.stringContaining('no checkpoint turn is open')]]);
    expect(existsSync(file('b.txt'))).toBe(false);
  });

  it('allows Bash and Write under worktree isolation', async () => {
    const results = await runCalls(
      [reversibleExecution({ mode: 'local-first', isolation: 'worktree' })],
      [
        { name: 'Bash', input: { command: 'echo isolated > made-by-bash' } },
        { name: 'Write', input: { file_path: file('b.txt'), content: 'b\n' } },
      ],
    );
    expect(results.map(([isError]) => isError)).toEqual([false, false]);
    expect(await readFile(file('made-by-bash'), 'utf8')).toBe('isolated\n');
  });

  it('blocks tools it does not know unless listed as reversible', async () => {
    const ping: Tool = { name: 'mcp__status__ping', description: 'Pings.', parameters: { type: 'object' }, execute: () => ({ success: true, output: 'pong' }) };
    const blocked = await runCalls([toolsPlugin(ping), reversibleExecution({ mode: 'local-first' })], [{ name: 'mcp__status__ping', input: {} }]);
    expect(blocked).toEqual([[true, expect.stringContaining('mcp__status__ping is not known to be reversible')]]);
    await kernel?.shutdown();
    const allowed = await runCalls(
      [toolsPlugin(ping), reversibleExecution({ mode: 'local-first', reversibleTools: ['mcp__status__ping'] })],
      [{ name: 'mcp__status__ping', input: {} }],
    );
    expect(allowed).toEqual([[false, 'pong']]);
  });

  it('treats a session with sandboxed file tools (SandboxPaths bound) as sandbox-isolated', async () => {
    const run: Tool = {
      name: 'mcp__shell__run',
      description: 'Runs a command.',
      parameters: { type: 'object' },
      permission: { family: 'execute', subject: 'cmd' },
      execute: () => ({ success: true, output: 'ran' }),
    };
    const blocked = await runCalls([toolsPlugin(run), reversibleExecution({ mode: 'local-first' })], [{ name: 'mcp__shell__run', input: { cmd: 'make' } }]);
    expect(blocked).toEqual([[true, expect.stringContaining('to allow mcp__shell__run in local-first mode')]]);
    await kernel?.shutdown();
    const sandbox = definePlugin({
      name: 'fake-sandbox-paths',
      provides: [SandboxPaths],
      register({ bind }) {
        bind(SandboxPaths).toConstantValue({ root: '/workspace' });
      },
    });
    const allowed = await runCalls([toolsPlugin(run), sandbox, reversibleExecution({ mode: 'local-first' })], [{ name: 'mcp__shell__run', input: { cmd: 'make' } }]);
    expect(allowed).toEqual([[false, 'ran']]);
  });

  it('allows Agent jobs only in worktrees', () => {
    expect(agentRunsInWorktrees({ prompt: 'x', isolation: 'worktree' })).toBe(true);
    expect(agentRunsInWorktrees({ prompt: 'x' })).toBe(false);
    expect(agentRunsInWorktrees({ jobs: [{ isolation: 'worktree' }, { isolation: 'worktree' }] })).toBe(true);
    expect(agentRunsInWorktrees({ jobs: [{ isolation: 'worktree' }, {}] })).toBe(false);
    expect(agentRunsInWorktrees({ isolation: 'worktree', jobs: [{}, {}] })).toBe(true);
  });

  it('classifies tools by name and by declared family', () => {
    expect(['Read', 'Glob', 'Grep', 'WebFetch', 'WebSearch', 'BashOutput'].map((name) => reversibilityOf(name))).toEqual(Array(6).fill('read-only'));
    expect(['Write', 'Edit', 'MultiEdit', 'NotebookEdit'].map((name) => reversibilityOf(name))).toEqual(Array(4).fill('file-edit'));
    expect(reversibilityOf('Bash')).toBe('process');
    expect(reversibilityOf('KillShell')).toBe('process');
    expect(reversibilityOf('Task')).toBe('agent');
    expect(reversibilityOf('TodoWrite')).toBe('session-only');
    expect(reversibilityOf('mcp__fs__write', { family: 'edit', subject: 'path' })).toBe('file-edit');
    expect(reversibilityOf('mcp__fs__read', { family: 'read', subject: 'path' })).toBe('read-only');
    expect(reversibilityOf('mcp__web__get', { family: 'fetch', subject: 'url' })).toBe('read-only');
    expect(reversibilityOf('mcp__shell__run', { family: 'execute', subject: 'cmd' })).toBe('process');
    expect(reversibilityOf('mcp__mail__send')).toBe('unknown');
  });

  it('checks its options in the factory', () => {
    expect(() => reversibleExecution({ mode: 'strict' as never })).toThrow(PluginOptionsError);
    expect(() => reversibleExecution({ mode: 'local-first', isolation: 'vm' as never })).toThrow(/isolation/);
    expect(() => reversibleExecution({ mode: 'local-first', reversibleTools: [''] })).toThrow(/reversibleTools/);
  });
});
