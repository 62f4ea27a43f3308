import { InMemorySandboxClient } from './sandbox/in-memory-sandbox-client.js';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { BackgroundTasks, ShellDirectories, WorkspaceGrants, type ToolExecutionEvent, type ToolMessage } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinTools, bashToolPlugin, editToolPlugin, readToolPlugin, toolSessionStatePlugin } from './plugins.js';
import { ToolSessionState, ToolSessionStateToken } from './session-state.js';
import { tempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => cleanup());

function toolResults(history: readonly unknown[]): Array<{ toolName: string; content: unknown; isError: boolean }> {
  return (history as ToolMessage[])
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content.map((block) => ({ toolName: block.toolName, content: block.content, isError: block.isError })));
}

describe('builtinTools in a session', () => {
  it('offers all eleven tools with Claude Code input shapes', async () => {
    const kernel = await createKernel({ plugins: [...testPreset({ turns: [{ text: 'hi' }] }), ...builtinTools()] });
    const session = kernel.createSession({ cwd: dir });
    const names = [...session.toolsByName.keys()];
    expect(names).toEqual(['Bash', 'BashOutput', 'KillShell', 'Read', 'Write', 'Edit', 'Glob', 'Grep', 'WebFetch', 'WebSearch', 'TodoWrite']);
    const todo = session.toolsByName.get('TodoWrite')!.parameters as { properties: { todos: { items: { properties: object; required: string[] } } } };
    expect(Object.keys(todo.properties.todos.items.properties)).toEqual(['content', 'status', 'activeForm', 'id', 'priority']);
    expect(todo.properties.todos.items.required).toEqual(['content', 'status']);
    const bashOutput = session.toolsByName.get('BashOutput')!.parameters as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(bashOutput.properties)).toEqual(['bash_id', 'filter']);
    expect(bashOutput.required).toEqual(['bash_id']);
    expect(Object.keys((session.toolsByName.get('KillShell')!.parameters as { properties: object }).properties)).toEqual(['shell_id']);
    const grep = session.toolsByName.get('Grep')!.parameters as { properties: Record<string, unknown> };
    expect(Object.keys(grep.properties)).toEqual(['pattern', 'path', 'glob', 'type', 'output_mode', '-i', '-n', '-A', '-B', '-C', 'multiline', 'head_limit']);
    await kernel.shutdown();
  });

  it('runs a Read → Edit → Bash → Grep turn end to end', async () => {
    const file = join(dir, 'greet.ts');
    await writeFile(file, 'export const greeting = "hello";\n');
    const state = new ToolSessionState();
    const events: ToolExecutionEvent[] = [];
    const kernel = await createKernel({
      plugins: [
        ...testPreset({
          turns: [
            { toolCalls: [{ name: 'Read', input: { file_path: file } }] },
            { toolCalls: [{ name: 'Edit', input: { file_path: file, old_string: '"hello"', new_string: '"hi"' } }] },
            { toolCalls: [{ name: 'Bash', input: { command: 'mkdir -p sub && cd sub && pwd' } }, { name: 'Bash', input: { command: 'pwd' } }] },
            { toolCalls: [{ name: 'Grep', input: { pattern: 'greeting', output_mode: 'content' } }] },
            { text: 'Done.' },
          ],
        }),
        ...builtinTools({ state }),
      ],
    });
    const session = kernel.createSession({ cwd: dir, onToolExecution: (event) => void events.push(event) });
    expect(await session.run('Rename the greeting')).toBe('Done.');
    expect(await readFile(file, 'utf8')).toBe('export const greeting = "hi";\n');
    const results = toolResults(session.getHistory());
    expect(results.map((result) => [result.toolName, result.isError])).toEqual([
      ['Read', false], ['Edit', false], ['Bash', false], ['Bash', false], ['Grep', false],
    ]);
    expect(results[3]?.content).toBe(join(dir, 'sub'));
    expect(results[4]?.content).toBe(`${file}:1:export const greeting = "hi";`);
    expect(state.has(session.sessionId)).toBe(true);
    await session.shutdown();
    expect(state.has(session.sessionId)).toBe(false);
    await kernel.shutdown();
  });

  it('turns a refused path into an error result the model sees', async () => {
    const kernel = await createKernel({
      plugins: [...testPreset({ turns: [{ toolCalls: [{ name: 'Read', input: { file_path: '/etc/passwd' } }] }, { text: 'ok' }] }), ...builtinTools()],
    });
    const session = kernel.createSession({ cwd: dir });
    await session.run('read it');
    const [result] = toolResults(session.getHistory());
    expect(result).toMatchObject({ toolName: 'Read', isError: true });
    expect(String(result?.content)).toContain(`Allowed roots: ${dir}`);
    await kernel.shutdown();
  });

  it('uses the BackgroundTasks service when another plugin binds it', async () => {
    const spawned: string[] = [];
    const background = definePlugin({
      name: 'fake-background',
      provides: [BackgroundTasks],
      register({ bind }) {
        bind(BackgroundTasks).toConstantValue({ spawn: async (request) => (spawned.push(request.command), { id: 'task-1' }) });
      },
    });
    const kernel = await createKernel({
      plugins: [
        ...testPreset({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'sleep 100', run_in_background: true } }] }, { text: 'ok' }] }),
        bashToolPlugin({ state: new ToolSessionState() }),
        background,
      ],
    });
    const session = kernel.createSession({ cwd: dir });
    await session.run('start it');
    expect(spawned).toEqual(['sleep 100']);
    expect(toolResults(session.getHistory())[0]?.content).toContain('task-1');
    await kernel.shutdown();
  });

  it('answers WebFetch prompts with the session provider only when a small model is configured', async () => {
    const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<p>The answer is 42.</p>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const fetchTurn = { toolCalls: [{ name: 'WebFetch', input: { url, prompt: 'What is the answer?' } }] };
    const sawPage = (messages: unknown) => JSON.stringify(messages).includes('The answer is 42.');
    try {
      // With a model: the prompt goes to the session's provider, asking for that model.
      const withModel = await createKernel({
        plugins: [
          ...testPreset({
            turns: [fetchTurn, ({ messages, model }) => ({ text: model === 'small-model' && sawPage(messages) ? 'Forty-two.' : 'wrong call' }), { text: 'ok' }],
          }),
          ...builtinTools({ exclude: ['Bash'], webFetch: { model: 'small-model' } }),
        ],
      });
      const answered = withModel.createSession({ cwd: dir });
      expect(await answered.run('look it up')).toBe('ok');
      expect(toolResults(answered.getHistory())[0]).toMatchObject({ toolName: 'WebFetch', content: 'Forty-two.', isError: false });
      await withModel.shutdown();

      // Without one: no model call (no scripted turn is used up); the page comes back as Markdown.
      const plain = await createKernel({
        plugins: [
          ...testPreset({ turns: [fetchTurn, ({ messages }) => ({ text: sawPage(messages) ? 'read the page' : 'page missing' })] }),
          ...builtinTools({ exclude: ['Bash'] }),
        ],
      });
      const session = plain.createSession({ cwd: dir });
      expect(await session.run('look it up')).toBe('read the page');
      expect(String(toolResults(session.getHistory())[0]?.content)).toContain('The answer is 42.');
      await plain.shutdown();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('can leave tools out', async () => {
    const plugins = builtinTools({ exclude: ['WebSearch', 'Bash', 'KillShell'] });
    expect(plugins.map((plugin) => plugin.name)).toEqual(['tool-session-state', 'tool-bash-output', 'tool-read', 'tool-write', 'tool-edit', 'tool-glob', 'tool-grep', 'tool-web-fetch', 'tool-todo-write', 'tool-sandbox-factory']);
    // A sandbox refuses background commands, so their companions are left out too.
    const sandboxed = builtinTools({ sandbox: { client: new InMemorySandboxClient() } });
    expect(sandboxed.map((plugin) => plugin.name)).not.toContain('tool-bash-output');
    expect(sandboxed.map((plugin) => plugin.name)).not.toContain('tool-kill-shell');
  });
});

describe('builtinTools values across kernels', () => {
  it('give each kernel its own tool state: a cd in one kernel moves no shell in another', async () => {
    const { mkdir } = await import('node:fs/promises');
    const { ShellDirectories } = await import('@tessera/contracts');
    await mkdir(join(dir, 'sub'));
    const tools = builtinTools();
    const turns = [{ toolCalls: [{ name: 'Bash', input: { command: 'cd sub' } }] }, { text: 'moved' }];
    const first = await createKernel({ plugins: [...testPreset({ turns }), ...tools] });
    await first.createSession({ cwd: dir, sessionId: 'same-id' }).run('go');
    expect(first.get(ShellDirectories).cwdFor('same-id')).toBe(join(dir, 'sub'));
    const second = await createKernel({ plugins: [...testPreset({ turns: [{ text: 'idle' }] }), ...tools] });
    second.createSession({ cwd: dir, sessionId: 'same-id' });
    expect(second.get(ShellDirectories).cwdFor('same-id')).toBeUndefined();
    await first.shutdown();
    await second.shutdown();
  });

  it('find BackgroundTasks per kernel, including one rebound after createKernel', async () => {
    const spawned: string[] = [];
    const fake = (label: string) => ({
      spawn: async () => (spawned.push(label), { id: `${label}_1`, logPath: '/dev/null' }),
      read: async () => ({ status: 'running' as const, lines: [], nextLine: 0, dropped: false }),
      stop: async () => 'cancelled' as const,
    });
    const turns = [{ toolCalls: [{ name: 'Bash', input: { command: 'sleep 1', run_in_background: true } }] }, { text: 'started' }];
    const kernel = await createKernel({
      plugins: [...testPreset({ turns: [...turns, ...turns] }), ...builtinTools(), definePlugin({ name: 'bg-a', provides: [BackgroundTasks], register: ({ bind }) => void bind(BackgroundTasks).toConstantValue(fake('a') as never) })],
    });
    await kernel.createSession({ cwd: dir }).run('go');
    kernel.container.rebind(BackgroundTasks).toConstantValue(fake('b') as never);
    await kernel.createSession({ cwd: dir }).run('go');
    expect(spawned).toEqual(['a', 'b']);
    await kernel.shutdown();
  });
});

/** A `BackgroundTasks` that records which instance spawned. */
const fakeTasks = (label: string, spawned: string[]) => ({
  spawn: async () => (spawned.push(label), { id: `${label}_${spawned.length}`, logPath: '/dev/null' }),
});
const backgroundCall = { toolCalls: [{ name: 'Bash', input: { command: 'sleep 1', run_in_background: true } }] };

describe('tool plugin values and the services they use', () => {
  it('one builtinTools() value in kernel A, then (A shut down) in kernel B: both work, and B starts from a state of its own', async () => {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'sub'));
    const file = join(dir, 'note.txt');
    await writeFile(file, 'one\n');
    const tools = builtinTools();
    const first = await createKernel({
      plugins: [
        ...testPreset({ turns: [{ toolCalls: [{ name: 'Read', input: { file_path: file } }] }, { toolCalls: [{ name: 'Bash', input: { command: 'cd sub' } }] }, { text: 'a' }] }),
        ...tools,
      ],
    });
    const a = first.createSession({ cwd: dir, sessionId: 'same-id' });
    expect(await a.run('go')).toBe('a');
    expect(first.get(ShellDirectories).cwdFor('same-id')).toBe(join(dir, 'sub'));
    const firstState = first.get(ToolSessionStateToken);
    expect(firstState.lastRead('same-id', file)).toBeDefined();
    await first.shutdown();

    const edit = (from: string, to: string) => ({ toolCalls: [{ name: 'Edit', input: { file_path: file, old_string: from, new_string: to } }] });
    const second = await createKernel({
      plugins: [
        ...testPreset({
          turns: [edit('one', 'two'), { toolCalls: [{ name: 'Bash', input: { command: 'pwd' } }] }, { toolCalls: [{ name: 'Read', input: { file_path: file } }] }, edit('one', 'two'), { text: 'b' }],
        }),
        ...tools,
      ],
    });
    try {
      const b = second.createSession({ cwd: dir, sessionId: 'same-id' });
      expect(await b.run('go')).toBe('b');
      const results = toolResults(b.getHistory());
      // Kernel A's read record and shell directory are not kernel B's.
      expect(results[0]).toMatchObject({ toolName: 'Edit', isError: true });
      expect(String(results[0]?.content)).toContain('has not been read yet');
      expect(results[1]).toMatchObject({ toolName: 'Bash', isError: false, content: dir });
      expect(results.slice(2).map((result) => [result.toolName, result.isError])).toEqual([['Read', false], ['Edit', false]]);
      expect(await readFile(file, 'utf8')).toBe('two\n');
      expect(second.get(ToolSessionStateToken)).not.toBe(firstState);
    } finally {
      await second.shutdown();
    }
  });

  it('a BackgroundTasks rebound after createKernel reaches sessions created afterwards; a running session keeps its own', async () => {
    const spawned: string[] = [];
    const kernel = await createKernel({
      plugins: [
        ...testPreset({ turns: [backgroundCall, { text: 'one' }, backgroundCall, { text: 'two' }, backgroundCall, { text: 'three' }] }),
        ...builtinTools(),
        definePlugin({ name: 'bg-a', provides: [BackgroundTasks], register: ({ bind }) => void bind(BackgroundTasks).toConstantValue(fakeTasks('a', spawned)) }),
      ],
    });
    try {
      const before = kernel.createSession({ cwd: dir });
      await before.run('go');
      (await kernel.rebind(BackgroundTasks)).toConstantValue(fakeTasks('b', spawned));
      await kernel.createSession({ cwd: dir }).run('go');
      await before.run('again');
      expect(spawned).toEqual(['a', 'b', 'a']);
    } finally {
      await kernel.shutdown();
    }
  });

  it('a ToolSessionState rebound after createKernel is the one sessions created afterwards record their reads in', async () => {
    const file = join(dir, 'seen.txt');
    await writeFile(file, 'x\n');
    const read = { toolCalls: [{ name: 'Read', input: { file_path: file } }] };
    const kernel = await createKernel({ plugins: [...testPreset({ turns: [read, { text: 'one' }, read, { text: 'two' }] }), ...builtinTools()] });
    try {
      const built = kernel.get(ToolSessionStateToken);
      await kernel.createSession({ cwd: dir, sessionId: 'first' }).run('go');
      const replacement = new ToolSessionState();
      (await kernel.rebind(ToolSessionStateToken)).toConstantValue(replacement);
      await kernel.createSession({ cwd: dir, sessionId: 'second' }).run('go');
      expect(built.lastRead('first', file)).toBeDefined();
      expect(replacement.lastRead('second', file)).toBeDefined();
      expect(built.lastRead('second', file)).toBeUndefined();
    } finally {
      await kernel.shutdown();
    }
  });

  it('tool plugins picked one by one require the tool state, which toolSessionStatePlugin() provides and releases at session end', async () => {
    await expect(createKernel({ plugins: [...testPreset({ turns: [] }), readToolPlugin()] })).rejects.toThrow(/ToolSessionState/);
    const file = join(dir, 'picked.txt');
    await writeFile(file, 'old\n');
    const kernel = await createKernel({
      plugins: [
        ...testPreset({
          turns: [{ toolCalls: [{ name: 'Read', input: { file_path: file } }] }, { toolCalls: [{ name: 'Edit', input: { file_path: file, old_string: 'old', new_string: 'new' } }] }, { text: 'ok' }],
        }),
        readToolPlugin(),
        editToolPlugin(),
        toolSessionStatePlugin({ maxSessions: 4 }),
      ],
    });
    try {
      const session = kernel.createSession({ cwd: dir });
      await session.run('edit');
      expect(await readFile(file, 'utf8')).toBe('new\n');
      const state = kernel.get(ToolSessionStateToken);
      expect(state.has(session.sessionId)).toBe(true);
      await session.shutdown();
      expect(state.has(session.sessionId)).toBe(false);
    } finally {
      await kernel.shutdown();
    }
    // A plugin given its own state needs none from the kernel.
    const alone = await createKernel({ plugins: [...testPreset({ turns: [] }), bashToolPlugin({ state: new ToolSessionState() })] });
    await alone.shutdown();
  });

  it('declares what each tool plugin requires and uses when present', async () => {
    const kernel = await createKernel({ plugins: [...testPreset({ turns: [] }), ...builtinTools()] });
    const declared = Object.fromEntries(kernel.describe().plugins.map((plugin) => [plugin.name, { requires: plugin.requires, optional: plugin.optional, provides: plugin.provides }]));
    await kernel.shutdown();
    expect(declared['tool-session-state']).toEqual({ requires: [], optional: [], provides: ['ToolSessionState'] });
    expect(declared['tool-bash']).toEqual({ requires: ['ToolSessionState'], optional: ['BackgroundTasks', 'WorkspaceGrants'], provides: ['ShellDirectories'] });
    expect(declared['tool-bash-output']).toEqual({ requires: [], optional: ['BackgroundTasks'], provides: [] });
    expect(declared['tool-read']).toEqual({ requires: ['ToolSessionState'], optional: ['WorkspaceGrants'], provides: [] });
    expect(declared['tool-grep']).toEqual({ requires: [], optional: ['ReadAccess', 'WorkspaceGrants'], provides: [] });
    expect(declared['tool-web-fetch']).toEqual({ requires: [], optional: [], provides: [] });
    // A value given in the options is not looked up; a sandbox uses neither background tasks nor grants.
    const given = builtinTools({ bash: { backgroundTasks: fakeTasks('x', []) }, exclude: ['BashOutput', 'KillShell'] });
    expect(given.find((plugin) => plugin.name === 'tool-bash')?.optional).toEqual([WorkspaceGrants]);
    const sandboxed = builtinTools({ sandbox: { client: new InMemorySandboxClient() } });
    expect(sandboxed.find((plugin) => plugin.name === 'tool-bash')?.optional ?? []).toEqual([]);
    expect(sandboxed.find((plugin) => plugin.name === 'tool-write')?.optional ?? []).toEqual([]);
  });

  it('checks its options in the factory', () => {
    expect(() => builtinTools({ exclude: ['Bash', 'Lint' as never] })).toThrow(expect.objectContaining({ code: 'invalid_plugin_options', message: expect.stringContaining('"Lint"') }));
    expect(() => builtinTools({ sandbox: {} as never })).toThrow(/sandbox\.client/);
    expect(() => toolSessionStatePlugin({ maxSessions: 0 })).toThrow(/maxSessions/);
  });
});
