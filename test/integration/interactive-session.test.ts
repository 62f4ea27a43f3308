import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandContribution, Diagnostics, SandboxPaths, type IExecutionResult, type IToolState } from '@tessera/contracts';
import { createKernel, createQuery, definePlugin, InteractiveSession, toolsPlugin, defineTool, type Kernel, type QueryMessage } from '@tessera/kernel';
import { inMemorySessionStore, InMemorySessionStore } from '@tessera/kernel/testing';
import { jsonlSessionStore } from '@tessera/plugin-session-store-jsonl';
import { promptFileReferences } from '@tessera/plugin-prompt-references';
import { systemPrompt } from '@tessera/plugin-system-prompt';
import { editCheckpoints, reversibleExecution } from '@tessera/plugin-checkpoints';
import { builtinTools } from '@tessera/plugin-tools';
import { builtinCommands, commandModulePlugin } from '@tessera/plugin-commands';
import { backgroundRuntime, BackgroundTaskManagerToken } from '@tessera/plugin-background';
import { compaction } from '@tessera/plugin-compaction';
import { contextWindow } from '@tessera/plugin-context-window';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

let dir: string;
let kernel: Kernel | undefined;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-interactive-')));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A tool that waits until released (or aborted), so a test controls when a batch ends. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const started: string[] = [];
  const tool = defineTool({
    name: 'Wait',
    description: 'waits',
    inputSchema: z.object({ label: z.string() }),
    execute: async ({ label }, context) => {
      started.push(label);
      await Promise.race([opened, new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))]);
      return context.signal.aborted ? { success: false, output: 'aborted', errorCode: 'aborted' } : { success: true, output: `done ${label}` };
    },
  });
  return { tool, open, started };
}

describe('InteractiveSession: prompt queue', () => {
  it('cancelQueue drops the queued prompt only; getActiveTools lists the calls still running; the context state carries the auto-compact threshold', async () => {
    const { tool, open, started } = gate();
    kernel = await createKernel({ plugins: testPreset({ turns: [{ toolCalls: [{ id: 'w1', name: 'Wait', input: { label: 'one' } }] }, { text: 'finished' }], plugins: [toolsPlugin(tool)] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const running = session.submit('run it');
    while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(session.getActiveTools()).toEqual([expect.objectContaining({ toolCallId: 'w1', toolName: 'Wait', firstArg: 'one', isRunning: true })]);
    const queued = session.submit('later');
    expect(session.getPendingPrompt()).toBe('later');
    expect(session.cancelQueue()).toBe('later');
    expect(session.cancelQueue()).toBeNull();
    expect(await queued).toBeUndefined();
    open();
    expect((await running)?.response).toBe('finished');
    expect(session.getActiveTools()).toEqual([]);
    session.getSession().setAutoCompactThreshold(0.5);
    expect(session.getContextState().autoCompactThreshold).toBe(0.5);
    session.getSession().setAutoCompactThreshold(false);
    expect(session.getContextState().autoCompactThreshold).toBe(false);
    await session.shutdown();
  });

  it('runs one prompt, queues the next, refuses a third with prompt_queue_full', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'first', delayMs: 20 }, { text: 'second' }] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const first = session.submit('one');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(session.isExecuting()).toBe(true);
    const second = session.submit('two');
    expect(session.getPendingPrompt()).toBe('two');
    await expect(session.submit('three')).rejects.toMatchObject({ code: 'prompt_queue_full' });
    expect((await first)!.response).toBe('first');
    expect((await second)!.response).toBe('second');
    expect(session.getMessages().filter((message) => message.role === 'user')).toHaveLength(2);
    await session.shutdown();
  });

  it('submit with content blocks: the running and the queued prompt keep their images', async () => {
    const png = { type: 'image' as const, data: 'iVBORw0KGgo=', mediaType: 'image/png' };
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'first', delayMs: 20 }, { text: 'second' }] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const first = session.submit('see this', undefined, undefined, { content: [png, { type: 'text', text: 'see this' }] });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = session.submit('and this', undefined, undefined, { content: [{ type: 'text', text: 'and this' }, png] });
    await first;
    await second;
    expect(session.getMessages().filter((message) => message.role === 'user')).toEqual([
      { role: 'user', content: [png, { type: 'text', text: 'see this' }] },
      { role: 'user', content: [{ type: 'text', text: 'and this' }, png] },
    ]);
    await session.shutdown();
  });

  it('abort during a tool batch: queue cleared, interrupted fired once, the session stays usable', async () => {
    const { tool, started } = gate();
    kernel = await createKernel({
      plugins: testPreset({
        turns: [{ toolCalls: [{ id: 'a', name: 'Wait', input: { label: 'a' } }, { id: 'b', name: 'Wait', input: { label: 'b' } }] }, { text: 'after abort' }],
        plugins: [toolsPlugin(tool)],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const interrupted: IExecutionResult[] = [];
    session.on('interrupted', (result) => interrupted.push(result));
    const running = session.submit('go');
    const queued = session.submit('queued');
    while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    session.abort();
    expect(session.getPendingPrompt()).toBeNull();
    await expect(queued).resolves.toBeUndefined();
    const result = await running;
    expect(interrupted).toHaveLength(1);
    expect(result).toBe(interrupted[0]);
    expect(session.isExecuting()).toBe(false);
    expect((await session.submit('again'))!.response).toBe('after abort');
    await session.shutdown();
  });
});

describe('InteractiveSession: abort before the run starts', () => {
  it('an abort right after submit, while the prompt is still being prepared, ends it without asking the model', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'should not be asked' }, { text: 'second prompt' }] });
    kernel = await createKernel({ plugins: testPreset({ provider }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.whenReady();
    const interrupted: IExecutionResult[] = [];
    session.on('interrupted', (result) => interrupted.push(result));
    const running = session.submit('go');
    session.abort();
    await running;
    expect(interrupted).toHaveLength(1);
    expect(provider.callCount).toBe(0);
    expect((await session.submit('again'))!.response).toBe('should not be asked');
    await session.shutdown();
  });
});

describe('InteractiveSession: events and tool states', () => {
  it('streams each text chunk once, whether or not something subscribes to the kernel session too', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'one two' }, { text: 'three' }] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const deltas: string[] = [];
    const streaming: string[] = [];
    session.on('text_delta', (delta) => {
      deltas.push(delta);
      streaming.push(session.getStreamingText());
    });
    await session.submit('first');
    const afterFirst = deltas.length;
    const kernelDeltas: string[] = [];
    session.getSession().subscribe((event) => {
      if (event.type === 'text_delta') kernelDeltas.push(event.delta);
    });
    await session.submit('second');
    expect(deltas.slice(0, afterFirst).join('')).toBe('one two');
    // With a kernel subscriber the session builds text events; the facade still sends each chunk once.
    expect(kernelDeltas.join('')).toBe('three');
    expect(deltas.slice(afterFirst)).toEqual(kernelDeltas);
    // The streamed text so far, as a UI reads it mid-turn.
    expect(streaming.at(-1)).toBe('three');
    await session.shutdown();
  });

  it('a two-tool turn with a thinking model: events in order, a timeline with tool entries and a summary', async () => {
    const echo = defineTool({ name: 'Echo', description: 'echo', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => ({ success: true, output: text }) });
    kernel = await createKernel({
      plugins: testPreset({
        turns: [
          { thinking: 'let me think', text: 'Calling. ', toolCalls: [{ id: 't1', name: 'Echo', input: { text: 'one' } }, { id: 't2', name: 'Nope', input: {} }], usage: { inputTokens: 100, outputTokens: 10 } },
          { text: 'Done.', usage: { inputTokens: 150, outputTokens: 5 } },
          { text: 'Again.' },
        ],
        plugins: [toolsPlugin(echo)],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const seen: string[] = [];
    session.on('thinking', (on) => seen.push(`thinking:${on}`));
    session.on('thinking_delta', () => seen.push('thinking_delta'));
    session.on('text_delta', (delta) => seen.push(`text:${delta}`));
    session.on('tool_start', (state) => seen.push(`start:${state.toolName}`));
    session.on('tool_end', (state) => seen.push(`end:${state.toolName}:${state.result}:${state.errorCode ?? ''}`));
    session.on('complete', (result) => seen.push(`complete:${result.response}`));
    const result = (await session.submit('go'))!;
    expect(seen).toEqual([
      'thinking:true',
      'thinking_delta',
      'text:Calling. ',
      'start:Echo',
      'end:Echo:success:',
      'start:Nope',
      'end:Nope:error:unknown_tool',
      'text:Done.',
      'complete:Done.',
      'thinking:false',
    ]);
    expect(result.toolSummaries.map((tool) => [tool.toolName, tool.firstArg, tool.result])).toEqual([
      ['Echo', 'one', 'success'],
      ['Nope', '', 'error'],
    ]);
    expect(result.usage).toMatchObject({ kind: 'exact', promptTokens: 250, completionTokens: 15, totalTokens: 265 });
    const events = session.getFullHistory().filter((entry) => entry.category === 'event').map((entry) => entry.type);
    expect(events).toEqual(['tool-start', 'tool-end', 'tool-start', 'tool-end', 'tool-summary', 'usage-summary']);
    // Built when read, yet plain data: enumerable, kept by a spread and by JSON.
    const summaryEntry = session.getFullHistory().find((entry) => entry.type === 'tool-summary')!;
    expect(JSON.parse(JSON.stringify(summaryEntry.data))).toMatchObject({ summary: 'Echo(one): success\nNope: error', tools: [{ toolName: 'Echo' }, { toolName: 'Nope' }] });
    expect(Object.keys(summaryEntry.data as object).sort()).toEqual(['summary', 'tools']);
    const historyTypes = (history: readonly { type: string }[]) => history.map((entry) => entry.type);
    expect(historyTypes({ ...result }.history)).toEqual(historyTypes(session.getHistory()));
    expect(historyTypes((JSON.parse(JSON.stringify(result)) as { history: { type: string }[] }).history)).toEqual(historyTypes(session.getHistory()));
    // The result's history is the timeline as the turn ended, not what came after it.
    const atEnd = session.getHistory().length;
    const second = (await session.submit('again'))!;
    expect(result.history).toHaveLength(atEnd);
    expect(second.history.length).toBeGreaterThan(atEnd);
    await session.shutdown();
  });

  it('a completed Edit carries its file and diff lines; a Bash call its bounded output', async () => {
    const file = join(dir, 'notes.txt');
    await writeFile(file, 'alpha\nbeta\ngamma\n');
    kernel = await createKernel({
      plugins: testPreset({
        turns: [
          { toolCalls: [{ id: 'r', name: 'Read', input: { file_path: file } }] },
          { toolCalls: [{ id: 'e', name: 'Edit', input: { file_path: file, old_string: 'beta', new_string: 'BETA\nbeta2' } }] },
          { toolCalls: [{ id: 'b', name: 'Bash', input: { command: 'echo hello' } }] },
          { text: 'ok' },
        ],
        plugins: [builtinTools()],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const ended: IToolState[] = [];
    session.on('tool_end', (state) => ended.push(state));
    await session.submit('edit it');
    const edit = ended.find((state) => state.toolName === 'Edit')!;
    expect(edit).toMatchObject({ result: 'success', diffFile: file, firstArg: file });
    expect(edit.diffLines!.filter((line) => line.type !== 'context')).toEqual([
      { type: 'hunk', text: expect.stringMatching(/^@@ -\d+,\d+ \+\d+,\d+ @@$/) },
      { type: 'remove', text: 'beta', oldLine: 2 },
      { type: 'add', text: 'BETA', newLine: 2 },
      { type: 'add', text: 'beta2', newLine: 3 },
    ]);
    expect(await readFile(file, 'utf8')).toBe('alpha\nBETA\nbeta2\ngamma\n');
    const bash = ended.find((state) => state.toolName === 'Bash')!;
    expect(bash.toolResultData).toBe('hello\n');
    await session.shutdown();
  });

  it('a listener that throws is reported and never breaks the turn', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'fine' }] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    session.on('text_delta', () => {
      throw new Error('listener bug');
    });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    expect((await session.submit('hi'))!.response).toBe('fine');
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings.some((message) => message.includes('listener bug'))).toBe(true);
    await session.shutdown();
  });

  it('context_update: each estimate of the turn, with the auto-compact threshold, while a listener is there', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [{ toolCalls: [{ name: 'Echo', input: { text: 'a' } }] }, { text: 'one' }, { text: 'two' }, { text: 'three' }], plugins: [contextWindow(), toolsPlugin(defineTool({ name: 'Echo', description: 'echo', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => ({ success: true, output: text }) }))] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.whenReady();
    session.getSession().setAutoCompactThreshold(0.8);
    const states: Array<{ usedTokens: number; autoCompactThreshold: number | false }> = [];
    const off = session.on('context_update', (state) => states.push({ usedTokens: state.usedTokens, autoCompactThreshold: state.autoCompactThreshold }));
    expect((await session.submit('echo a'))!.response).toBe('one');
    // Before and after each of the two model calls; the estimate grows with the conversation.
    expect(states).toHaveLength(4);
    expect(states.every((state) => state.autoCompactThreshold === 0.8)).toBe(true);
    expect(states[3]!.usedTokens).toBeGreaterThan(states[0]!.usedTokens);
    off();
    await session.submit('quiet');
    expect(states).toHaveLength(4);
    // A listener added between turns gets the next turn's estimates.
    session.on('context_update', (state) => states.push({ usedTokens: state.usedTokens, autoCompactThreshold: state.autoCompactThreshold }));
    await session.submit('loud');
    expect(states).toHaveLength(6);
    expect(session.getContextState().usedTokens).toBe(states[5]!.usedTokens);
    await session.shutdown();
  });
});

describe('InteractiveSession: displayInput and rawInput', () => {
  it('the timeline shows displayInput, the model gets input, prompt hooks see rawInput; kept across resume; a blocked prompt lends its display to nothing', async () => {
    const agentDir = join(dir, 'agent');
    const seen: Array<{ prompt: string; rawPrompt?: string }> = [];
    const watcher = definePlugin({
      name: 'watch-prompts',
      register({ hooks }) {
        hooks.userPromptSubmit.tap('watch-prompts', (context) => {
          seen.push({ prompt: context.prompt, ...(context.rawPrompt === undefined ? {} : { rawPrompt: context.rawPrompt }) });
          return context.prompt === 'blocked please' ? { ...context, blocked: { reason: 'no' } } : context;
        });
      },
    });
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'Audited.' }, { text: 'Plain.' }], replace: [jsonlSessionStore({ agentDir })], plugins: [watcher] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.submit('Audit the src folder for unsafe code. (expanded skill prompt)', '/audit src', '/audit src');
    await expect(session.submit('blocked please', '/blocked')).rejects.toMatchObject({ code: 'prompt_blocked' });
    await session.submit('plain prompt');
    expect(seen).toEqual([
      { prompt: 'Audit the src folder for unsafe code. (expanded skill prompt)', rawPrompt: '/audit src' },
      { prompt: 'blocked please' },
      { prompt: 'plain prompt' },
    ]);
    const userTexts = (history: ReturnType<InteractiveSession['getHistory']>): unknown[] =>
      history.filter((entry) => entry.category === 'chat' && (entry.data as { role: string }).role === 'user').map((entry) => (entry.data as { content: unknown }).content);
    expect(userTexts(session.getHistory())).toEqual(['/audit src', 'plain prompt']);
    expect(JSON.stringify(session.getMessages()[0])).toContain('expanded skill prompt');
    const id = session.getSessionId();
    await session.shutdown();

    const resumed = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: id });
    await resumed.whenReady();
    expect(userTexts(resumed.getHistory())).toEqual(['/audit src', 'plain prompt']);
    expect(JSON.stringify(resumed.getMessages()[0])).toContain('expanded skill prompt');
    await resumed.shutdown();
  });

  it('a prompt-display event shows only on the user entry holding its prompt (a resumed file may have put a compaction summary there)', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [] }) });
    const at = '2026-01-01T00:00:00.000Z';
    const history = [
      { id: 'u1', timestamp: at, category: 'chat' as const, type: 'user', data: { role: 'user' as const, content: 'Summary of the earlier conversation' } },
      { id: 'e1', timestamp: at, category: 'event' as const, type: 'prompt-display', data: { displayInput: '/audit src', chatBack: 1, promptHead: 'Audit the src folder' } },
      { id: 'u2', timestamp: at, category: 'chat' as const, type: 'user', data: { role: 'user' as const, content: 'Audit the src folder for unsafe code.' } },
      { id: 'e2', timestamp: at, category: 'event' as const, type: 'prompt-display', data: { displayInput: '/audit src', chatBack: 1, promptHead: 'Audit the src folder' } },
    ];
    const session = new InteractiveSession({ session: kernel.createSession({ history }) });
    await session.whenReady();
    expect(session.getHistory().filter((entry) => entry.category === 'chat').map((entry) => (entry.data as { content: unknown }).content)).toEqual(['Summary of the earlier conversation', '/audit src']);
    await session.shutdown();
  });

  it('persists after each completed submit, before any shutdown: another reader sees the turn and its summary entries', async () => {
    const agentDir = join(dir, 'agent');
    const echo = defineTool({ name: 'Echo', description: 'echoes', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => ({ success: true, output: text }) });
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'Calling.', toolCalls: [{ name: 'Echo', input: { text: 'hi' } }] }, { text: 'Done.' }], replace: [jsonlSessionStore({ agentDir })], plugins: [toolsPlugin(echo)] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.submit('echo hi');
    const reader = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonlSessionStore({ agentDir })] }) });
    try {
      const peek = new InteractiveSession({ kernel: reader, cwd: dir, resumeSessionId: session.getSessionId() });
      await peek.whenReady();
      expect(peek.getMessages().map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(peek.getHistory().filter((entry) => entry.category === 'event').map((entry) => entry.type)).toEqual(['tool-start', 'tool-end', 'tool-summary']);
      await peek.shutdown();
    } finally {
      await reader.shutdown();
    }
    await session.shutdown();
  });
});

describe('InteractiveSession: @file references', () => {
  it('sends file contents to the model only; the timeline keeps the prompt and a reference record; a bad reference blocks the prompt', async () => {
    await writeFile(join(dir, 'AGENTS.md'), 'Use tabs.');
    const provider = new ScriptedProvider({ turns: [{ text: 'noted' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [promptFileReferences()] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const references: unknown[] = [];
    session.on('prompt_file_reference', (event) => references.push(...event.references));
    await session.submit('follow @AGENTS.md please');
    expect(JSON.stringify(provider.requests[0]!.messages)).toContain('Use tabs.');
    const user = session.getFullHistory().find((entry) => entry.category === 'chat' && entry.type === 'user')!;
    expect(JSON.stringify(user.data)).not.toContain('Use tabs.');
    expect(JSON.stringify(user.data)).toContain('follow @AGENTS.md please');
    expect(references).toEqual([expect.objectContaining({ relativePath: 'AGENTS.md', originalReference: '@AGENTS.md', depth: 0, byteLength: 9 })]);
    expect(session.getFullHistory().some((entry) => entry.type === 'prompt-file-reference')).toBe(true);

    const errors: Error[] = [];
    session.on('error', (error) => errors.push(error));
    await expect(session.submit('read @missing/file.md')).rejects.toMatchObject({ code: 'prompt_blocked' });
    expect(errors[0]!.message).toMatch(/missing\/file\.md/);
    expect(provider.requests).toHaveLength(1);
    const system = session.getFullHistory().filter((entry) => entry.type === 'system');
    expect(system.at(-1)!.data).toMatchObject({ level: 'error', code: 'prompt_blocked' });
    await session.shutdown();
  });
});

describe('InteractiveSession: commands', () => {
  it('executes and lists commands contributed as modules; unknown names give null', async () => {
    kernel = await createKernel({
      plugins: testPreset({
        turns: [],
        plugins: [
          definePlugin({
            name: 'hello-command',
            contributes: [CommandContribution],
            register: ({ bind }) =>
              void bind(CommandContribution).toConstantValue({
                name: 'hello',
                systemCommands: [{ name: 'hello', description: 'Say hello', execute: (context, args) => ({ success: true, message: `hello ${args} from ${context.sessionId}` }) }],
              }),
          }),
        ],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir, sessionId: 'cmd-session' });
    expect(await session.executeCommand('/hello', 'world')).toEqual({ success: true, message: 'hello world from cmd-session' });
    expect(await session.executeCommand('missing')).toBeNull();
    expect(session.listCommands().map((command) => command.name)).toEqual(['hello']);
    await session.shutdown();
  });

  it("a host command (scope 'host') is listed as such, never offered to the model, and runs only for the user", async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'ok' }] });
    const ran: string[] = [];
    kernel = await createKernel({
      plugins: testPreset({
        provider,
        plugins: [
          commandModulePlugin(
            'host-command',
            [
              // Declared model-invocable: the host scope overrides that.
              { name: 'wipe-cache', description: 'Wipe the shared cache', scope: 'host', modelInvocable: true, execute: (context) => (ran.push(context.invocation ?? 'unset'), { success: true, message: 'wiped' }) },
              { name: 'echo', description: 'Echo', modelInvocable: true, execute: (_context, args) => ({ success: true, message: args }) },
            ],
            [{ name: 'echo', description: 'Echo the arguments.' }],
          ),
        ],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.whenReady();
    expect(session.listCommands()).toEqual([
      expect.objectContaining({ name: 'echo', modelInvocable: true }),
      expect.objectContaining({ name: 'wipe-cache', modelInvocable: false, scope: 'host' }),
    ]);
    expect(session.listCommands()[0]).not.toHaveProperty('scope');
    await session.submit('hi');
    expect(provider.requests[0]!.tools?.map((tool) => tool.name)).toContain('tessera_command_echo');
    expect(provider.requests[0]!.tools?.map((tool) => tool.name)).not.toContain('tessera_command_wipe-cache');
    expect(await session.executeCommand('wipe-cache', '', { invocation: 'model-tool' })).toMatchObject({ success: false, message: expect.stringContaining('only the user') });
    expect(ran).toEqual([]);
    expect(await session.executeCommand('/wipe-cache')).toEqual({ success: true, message: 'wiped' });
    expect(ran).toEqual(['user-slash']);
    await session.shutdown();
  });

  it('applies /rename, /language and /model to the session itself (saved, sent to the model, kept on resume); refuses them during a turn', async () => {
    const agentDir = join(dir, 'agent');
    const { tool, open, started } = gate();
    const provider = new ScriptedProvider({ turns: [{ text: 'one' }, { toolCalls: [{ id: 'w1', name: 'Wait', input: { label: 'held' } }] }, { text: 'released' }] });
    const compose = () => createKernel({ plugins: testPreset({ provider, replace: [jsonlSessionStore({ agentDir })], plugins: [systemPrompt({ git: false, now: () => Date.UTC(2026, 10, 27) }), ...builtinCommands(), toolsPlugin(tool)] }) });
    kernel = await compose();
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.whenReady();

    const renamed = await session.executeCommand('rename', 'release prep');
    expect(renamed).toMatchObject({ success: true, effects: [{ type: 'session-renamed', name: 'release prep' }] });
    expect(session.getName()).toBe('release prep');

    const language = await session.executeCommand('language', 'Korean');
    expect(language).toMatchObject({ success: true, effects: [{ type: 'language-change-requested', language: 'Korean' }] });
    // Set twice: the line is replaced, not added again.
    await session.executeCommand('language', '日本語');
    const model = await session.executeCommand('model', 'other-model');
    expect(model).toMatchObject({ success: true });
    expect(session.getSession().getModel()).toBe('other-model');

    await session.submit('hi');
    const system = provider.requests[0]!.system!;
    expect(system.match(/Response language/g)).toHaveLength(1);
    expect(system).toContain('- Response language: 日本語');
    expect(system).toContain('## Environment');
    expect(provider.requests[0]!.model).toBe('other-model');

    // Refused while a turn runs (a tool call is held open), and the session is left as it was.
    const running = session.submit('again');
    while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    const busy = await session.executeCommand('language', 'French');
    expect(busy).toMatchObject({ success: false, effects: [] });
    expect(busy!.message).toMatch(/Not applied: a turn is running/);
    expect(session.getSession().getSystemMessage()).toContain('- Response language: 日本語');
    open();
    expect((await running)?.response).toBe('released');
    const id = session.getSessionId();
    await session.shutdown();
    await kernel.shutdown();

    // A new process resumes the same file: name and language come back with it.
    kernel = await compose();
    const resumed = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: id });
    await resumed.whenReady();
    expect(resumed.getName()).toBe('release prep');
    expect(resumed.getSession().getSystemMessage()).toContain('- Response language: 日本語');
    await resumed.shutdown();
  });
});

describe('InteractiveSession: persistence', () => {
  it('persists after each submit, names, resumes with history and name, forks without touching the original file', async () => {
    const agentDir = join(dir, 'agent');
    const compose = (turns: Array<{ text: string }>) => createKernel({ plugins: testPreset({ turns, replace: [jsonlSessionStore({ agentDir })] }) });
    kernel = await compose([{ text: 'first answer' }]);
    const original = new InteractiveSession({ kernel, cwd: dir, name: 'my work' });
    await original.submit('remember the number 7');
    await original.shutdown();
    const id = original.getSessionId();
    await kernel.shutdown();

    // A new process: a new kernel over the same files.
    kernel = await compose([{ text: 'it was 7' }, { text: 'forked answer' }]);
    const listed = await InteractiveSession.listResumableSessions(kernel, dir);
    expect(listed).toEqual([expect.objectContaining({ id, name: 'my work', firstPrompt: 'remember the number 7', messageCount: 2 })]);
    const files = async () => {
      const { readdir } = await import('node:fs/promises');
      const { join: joinPath } = await import('node:path');
      const found: string[] = [];
      const walk = async (path: string): Promise<void> => {
        for (const entry of await readdir(path, { withFileTypes: true })) {
          if (entry.isDirectory()) await walk(joinPath(path, entry.name));
          else if (entry.name.endsWith('.jsonl')) found.push(joinPath(path, entry.name));
        }
      };
      await walk(agentDir);
      return found;
    };
    const [originalFile] = await files();
    const resumed = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: id });
    await resumed.whenReady();
    expect(resumed.getSessionId()).toBe(id);
    expect(resumed.getName()).toBe('my work');
    expect(resumed.getMessages()).toHaveLength(2);
    await resumed.submit('what was the number?');
    expect(resumed.getMessages()).toHaveLength(4);
    await resumed.shutdown();
    const before = await readFile(originalFile!, 'utf8');

    const forked = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: id, forkSession: true });
    await forked.whenReady();
    expect(forked.getSessionId()).not.toBe(id);
    expect(forked.getMessages()).toHaveLength(4);
    await forked.submit('a fork');
    await forked.shutdown();
    expect(await readFile(originalFile!, 'utf8')).toBe(before);
    expect((await files()).length).toBe(2);
  });

  it('resumes a damaged file: every complete entry comes back, the dropped lines are reported, the file is only appended to', async () => {
    const agentDir = join(dir, 'agent');
    const reports: string[] = [];
    const diagnostics = definePlugin({
      name: 'collect-diagnostics',
      provides: [Diagnostics],
      register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(`${report.code}: ${report.message}`) }),
    });
    const compose = (turns: Array<{ text: string }>) => createKernel({ plugins: testPreset({ turns, replace: [jsonlSessionStore({ agentDir })], plugins: [diagnostics] }) });
    kernel = await compose([{ text: 'a1' }, { text: 'a2' }]);
    const first = new InteractiveSession({ kernel, cwd: dir });
    await first.submit('q1');
    await first.submit('q2');
    await first.shutdown();
    await kernel.shutdown();
    const { readdir, appendFile } = await import('node:fs/promises');
    const projectDir = join(agentDir, 'sessions', (await readdir(join(agentDir, 'sessions')))[0]!);
    const file = join(projectDir, (await readdir(projectDir)).find((name) => name.endsWith('.jsonl'))!);
    // A torn final line: what a crash in the middle of a write leaves.
    await appendFile(file, '{"type":"message","id":"torn","parentId":null,"message":{"role":"user","con');
    const damaged = await readFile(file, 'utf8');

    kernel = await compose([{ text: 'a3' }]);
    const resumed = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: first.getSessionId() });
    await resumed.whenReady();
    expect(resumed.getMessages().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(reports).toEqual([expect.stringMatching(/^TESSERA_SESSION_WARNING: incomplete last line \(torn write\), dropped/)]);
    await resumed.submit('q3');
    await resumed.shutdown();
    const after = await readFile(file, 'utf8');
    expect(after.startsWith(damaged.slice(0, damaged.lastIndexOf('\n') + 1))).toBe(true);
  });

  it('listResumableSessions: newest first, only the cwd asked for, with every field; the first prompt as the user typed it', async () => {
    const agentDir = join(dir, 'agent');
    const other = join(dir, 'other');
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }, { text: 'c' }], replace: [jsonlSessionStore({ agentDir })] }) });
    const skill = new InteractiveSession({ kernel, cwd: dir, name: 'skilled' });
    // A skill prompt: the model gets the expanded body, the user typed `/audit src`.
    await skill.submit('Audit the folder src for unsafe file access.\nFull skill instructions follow.', '/audit src', '/audit src');
    await skill.shutdown();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const plain = new InteractiveSession({ kernel, cwd: dir });
    await plain.submit('second session');
    await plain.shutdown();
    const elsewhere = new InteractiveSession({ kernel, cwd: other });
    await elsewhere.submit('another folder');
    await elsewhere.shutdown();

    const listed = await InteractiveSession.listResumableSessions(kernel, dir);
    expect(listed.map((session) => session.id)).toEqual([plain.getSessionId(), skill.getSessionId()]);
    expect(listed[1]).toEqual({ id: skill.getSessionId(), name: 'skilled', cwd: dir, firstPrompt: '/audit src', updatedAt: expect.any(String), messageCount: 2 });
    expect(listed[0]).toMatchObject({ cwd: dir, firstPrompt: 'second session', messageCount: 2 });
    expect(Date.parse(listed[0]!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(listed[1]!.updatedAt));
    expect((await InteractiveSession.listResumableSessions(kernel, other)).map((session) => session.firstPrompt)).toEqual(['another folder']);
    expect(await InteractiveSession.listResumableSessions(kernel)).toHaveLength(3);
  });

  it('continueMostRecent picks the newest session of the cwd; an unknown resume id is a typed error', async () => {
    const store = new InMemorySessionStore();
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }, { text: 'c' }], replace: [inMemorySessionStore(store)] }) });
    const one = new InteractiveSession({ kernel, cwd: dir });
    await one.submit('one');
    await one.shutdown();
    const continued = new InteractiveSession({ kernel, cwd: dir, continueMostRecent: true });
    await continued.whenReady();
    expect(continued.getSessionId()).toBe(one.getSessionId());
    await continued.shutdown();
    const missing = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: 'no-such-session' });
    await expect(missing.whenReady()).rejects.toMatchObject({ code: 'session_not_found' });
    await expect(missing.submit('x')).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it("resuming by id with a cwd needs the session's own folder (resume_cwd_mismatch); without a cwd it resumes where it was", async () => {
    const store = new InMemorySessionStore();
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], replace: [inMemorySessionStore(store)] }) });
    const first = new InteractiveSession({ kernel, cwd: dir });
    await first.submit('one');
    await first.shutdown();
    const id = first.getSessionId();
    const elsewhere = join(dir, 'other-project');
    const refused = new InteractiveSession({ kernel, cwd: elsewhere, resumeSessionId: id });
    await expect(refused.whenReady()).rejects.toMatchObject({ code: 'resume_cwd_mismatch', details: { sessionId: id, sessionCwd: dir, cwd: elsewhere } });
    await expect(refused.whenReady()).rejects.toThrow(`cd ${dir}`);
    // Forking another folder's session is refused alike.
    await expect(new InteractiveSession({ kernel, cwd: elsewhere, resumeSessionId: id, forkSession: true }).whenReady()).rejects.toMatchObject({ code: 'resume_cwd_mismatch' });
    // The same folder written another way is the same folder.
    const same = new InteractiveSession({ kernel, cwd: `${dir}/./`, resumeSessionId: id });
    await same.whenReady();
    expect(same.getMessages()).toHaveLength(2);
    await same.shutdown();
    const anywhere = new InteractiveSession({ kernel, resumeSessionId: id });
    await anywhere.whenReady();
    expect(anywhere.getSession().cwd).toBe(dir);
    await anywhere.shutdown();
  });

  it('shutdown is idempotent, refuses new prompts and fires sessionEnd once', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }] }) });
    let ends = 0;
    kernel.hooks.sessionEnd.tap('count', () => void (ends += 1));
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.submit('hi');
    await Promise.all([session.shutdown(), session.shutdown()]);
    await session.shutdown();
    expect(ends).toBe(1);
    await expect(session.submit('again')).rejects.toMatchObject({ code: 'session_closed' });
  });
});

describe('InteractiveSession: system prompt and sandbox', () => {
  it('builds the system prompt with the bound SystemPromptBuilder (context files included, append last); an explicit one wins', async () => {
    await writeFile(join(dir, 'CLAUDE.md'), 'Project rule: be brief.');
    const provider = new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [systemPrompt({ git: false, now: () => Date.UTC(2026, 10, 27) })] }) });
    const built = new InteractiveSession({ kernel, cwd: dir, appendSystemPrompt: 'APPENDED' });
    await built.submit('hi');
    const system = provider.requests[0]!.system!;
    expect(system).toContain('Project rule: be brief.');
    expect(system.trimEnd().endsWith('APPENDED')).toBe(true);
    await built.shutdown();
    const explicit = new InteractiveSession({ kernel, cwd: dir, systemPrompt: 'Only this.' });
    await explicit.submit('hi');
    expect(provider.requests[1]!.system).toBe('Only this.');
    await explicit.shutdown();
  });

  it('appendSystemPrompt goes after an explicit system prompt and after a resumed one, once however often the session is resumed with it', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, replace: [jsonlSessionStore({ agentDir: join(dir, 'agent') })] }) });
    const first = new InteractiveSession({ kernel, cwd: dir, systemPrompt: 'Base.', appendSystemPrompt: 'Extra.' });
    await first.submit('one');
    expect(provider.requests[0]!.system).toBe('Base.\n\nExtra.');
    const id = first.getSessionId();
    await first.shutdown();
    for (const turn of [1, 2]) {
      const resumed = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: id, appendSystemPrompt: 'Extra.' });
      await resumed.submit(`again ${turn}`);
      expect(provider.requests[turn]!.system).toBe('Base.\n\nExtra.');
      await resumed.shutdown();
    }
  });

  it('applies the workspace manifest once for a new session, snapshots at shutdown, restores the snapshot on resume instead of the manifest', async () => {
    const calls: string[] = [];
    const client = {
      snapshot: async () => (calls.push('snapshot'), 'snap-1'),
      restore: async (id: string) => void calls.push(`restore ${id}`),
    };
    const applyWorkspaceManifest = async (_client: unknown, manifest: unknown, hostRoot: string) => void calls.push(`apply ${JSON.stringify(manifest)} at ${hostRoot}`);
    const store = new InMemorySessionStore();
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], replace: [inMemorySessionStore(store)] }) });
    const first = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client, workspaceManifest: { entries: [] }, applyWorkspaceManifest });
    await first.submit('one');
    await first.shutdown();
    expect(calls).toEqual([`apply {"entries":[]} at ${dir}`, 'snapshot']);
    expect((await store.load(first.getSessionId()))!.sandboxSnapshotId).toBe('snap-1');
    calls.length = 0;
    const resumed = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: first.getSessionId(), sandboxClient: client, workspaceManifest: { entries: [] }, applyWorkspaceManifest });
    await resumed.submit('two');
    await resumed.shutdown();
    expect(calls).toEqual(['restore snap-1', 'snapshot']);
  });

  it('warns when a sandboxClient is given but the tools are not sandboxed (no SandboxPaths), and not when they are', async () => {
    const reports: string[] = [];
    const collect = definePlugin({ name: 'collect', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(String(report.code)) }) });
    const client = { snapshot: async () => 'snap', restore: async () => undefined };
    kernel = await createKernel({ plugins: testPreset({ turns: [], plugins: [collect] }) });
    const unsandboxed = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client });
    await unsandboxed.whenReady();
    expect(reports).toEqual(['TESSERA_SANDBOX_TOOLS_UNSANDBOXED']);
    await unsandboxed.shutdown();
    await kernel.shutdown();
    reports.length = 0;
    const paths = definePlugin({ name: 'sandbox-paths', provides: [SandboxPaths], register: ({ bind }) => void bind(SandboxPaths).toConstantValue({ root: '/workspace' }) });
    kernel = await createKernel({ plugins: testPreset({ turns: [], plugins: [collect, paths] }) });
    const sandboxed = new InteractiveSession({ kernel, cwd: dir, sandboxClient: client });
    await sandboxed.whenReady();
    expect(reports).toEqual([]);
    await sandboxed.shutdown();
  });
});

describe('InteractiveSession: edit checkpoints', () => {
  it('one checkpoint per submit; restore over three turns brings files back, deletes created ones, records the restore; refused while a prompt runs', async () => {
    const a = join(dir, 'a.txt');
    const b = join(dir, 'b.txt');
    await writeFile(a, 'one\n');
    kernel = await createKernel({
      plugins: testPreset({
        turns: [
          { toolCalls: [{ id: 'r1', name: 'Read', input: { file_path: a } }] },
          { toolCalls: [{ id: 'e1', name: 'Edit', input: { file_path: a, old_string: 'one', new_string: 'two' } }] },
          { text: 'turn 1 done' },
          { toolCalls: [{ id: 'w2', name: 'Write', input: { file_path: b, content: 'new file\n' } }] },
          { text: 'turn 2 done' },
          { toolCalls: [{ id: 'r3', name: 'Read', input: { file_path: a } }] },
          { toolCalls: [{ id: 'e3', name: 'Edit', input: { file_path: a, old_string: 'two', new_string: 'three' } }] },
          { text: 'turn 3 done', delayMs: 30 },
        ],
        plugins: [builtinTools(), editCheckpoints()],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.submit('turn one');
    await session.submit('turn two');
    const third = session.submit('turn three');
    await new Promise((resolve) => setTimeout(resolve, 10));
    const list = await session.listEditCheckpoints();
    await expect(session.restoreEditCheckpoint(list[0]!.id)).rejects.toMatchObject({ code: 'checkpoint_restore_busy' });
    await third;
    expect(await readFile(a, 'utf8')).toBe('three\n');
    const checkpoints = await session.listEditCheckpoints();
    expect(checkpoints.map((checkpoint) => checkpoint.prompt)).toEqual(['turn one', 'turn two', 'turn three']);
    const inspection = await session.inspectEditCheckpoint(checkpoints[1]!.id);
    expect(inspection.files.map((file) => [file.displayPath, file.existed])).toEqual([['b.txt', false]]);

    const restored = await session.restoreEditCheckpoint(checkpoints[1]!.id);
    expect(await readFile(a, 'utf8')).toBe('two\n');
    await expect(readFile(b, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(restored.removedCheckpoints).toHaveLength(2);
    expect((await session.listEditCheckpoints()).map((checkpoint) => checkpoint.prompt)).toEqual(['turn one']);
    expect(session.getFullHistory().at(-1)).toMatchObject({ category: 'event', type: 'checkpoint-restored' });
    await session.shutdown();
  });

  it('local-first reversible execution through the facade: Write is allowed and captured by the turn checkpoint, Bash is refused saying why', async () => {
    const target = join(dir, 'made.txt');
    kernel = await createKernel({
      plugins: testPreset({
        turns: [{ toolCalls: [{ name: 'Write', input: { file_path: target, content: 'new\n' } }, { name: 'Bash', input: { command: `touch ${join(dir, 'by-bash')}` } }] }, { text: 'done' }],
        plugins: [...builtinTools(), editCheckpoints(), reversibleExecution({ mode: 'local-first' })],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const result = await session.submit('write and run');
    const [write, bash] = result!.toolSummaries;
    expect(write).toMatchObject({ toolName: 'Write', result: 'success' });
    expect(bash).toMatchObject({ toolName: 'Bash', result: 'denied', denied: true });
    expect(await readFile(target, 'utf8')).toBe('new\n');
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(dir, 'by-bash'))).toBe(false);
    const refusal = session.getMessages().flatMap((message) => (message.role === 'tool' ? message.content : [])).find((block) => block.type === 'tool_result' && block.isError);
    expect(JSON.stringify(refusal)).toContain('Run with a worktree or sandbox isolation to allow Bash in local-first mode');
    // The Write went through the turn's checkpoint: restoring it removes the file it created.
    const [checkpoint] = await session.listEditCheckpoints();
    expect((await session.inspectEditCheckpoint(checkpoint!.id)).files.map((entry) => entry.path)).toEqual([target]);
    await session.restoreEditCheckpoint(checkpoint!.id);
    expect(existsSync(target)).toBe(false);
    await session.shutdown();
  });

  it('an ended session restores no checkpoint; a restore under way finishes, saved, before shutdown resolves', async () => {
    const store = new InMemorySessionStore();
    kernel = await createKernel({
      plugins: testPreset({
        turns: [{ toolCalls: [{ name: 'Write', input: { file_path: join(dir, 'made.txt'), content: 'made\n' } }] }, { text: 'Written.' }],
        replace: [inMemorySessionStore(store)],
        plugins: [editCheckpoints(), ...builtinTools({ exclude: ['WebFetch', 'WebSearch'] })],
      }),
    });
    const { existsSync } = await import('node:fs');
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.submit('write');
    const [checkpoint] = await session.listEditCheckpoints();
    // Started while idle, then the session is shut down: the restore completes and its entry is in the saved record.
    const restoring = session.restoreEditCheckpoint(checkpoint!.id);
    await session.shutdown();
    await restoring;
    expect(existsSync(join(dir, 'made.txt'))).toBe(false);
    const saved = await store.load(session.getSessionId());
    expect(saved?.history.some((entry) => entry.category === 'event' && entry.type === 'checkpoint-restored')).toBe(true);
    // Ended: refused as submit is, nothing touched.
    await import('node:fs/promises').then(({ writeFile }) => writeFile(join(dir, 'made.txt'), 'again\n'));
    await expect(session.restoreEditCheckpoint(checkpoint!.id)).rejects.toMatchObject({ code: 'session_closed' });
    expect(existsSync(join(dir, 'made.txt'))).toBe(true);
  });

  it('an injected session (options.session) without a cwd opens no project checkpoints; with one it does', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], plugins: [editCheckpoints()] }) });
    const bare = new InteractiveSession({ session: kernel.createSession({ cwd: dir }) });
    await bare.submit('no checkpoint');
    expect(await bare.listEditCheckpoints()).toEqual([]);
    await bare.shutdown();
    const placed = new InteractiveSession({ session: kernel.createSession({ cwd: dir }), cwd: dir });
    await placed.submit('checkpoint');
    expect((await placed.listEditCheckpoints()).map((checkpoint) => checkpoint.prompt)).toEqual(['checkpoint']);
    await placed.shutdown();
  });

  it('a prompt blocked before the model saw it leaves no checkpoint; the next prompt gets the next one', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }], plugins: [editCheckpoints(), promptFileReferences()] }) });
    const session = new InteractiveSession({ kernel, cwd: dir });
    session.on('error', () => undefined);
    await expect(session.submit('read @missing/file.md')).rejects.toMatchObject({ code: 'prompt_blocked' });
    expect(await session.listEditCheckpoints()).toEqual([]);
    await session.submit('a real prompt');
    expect((await session.listEditCheckpoints()).map((checkpoint) => [checkpoint.prompt, checkpoint.sequence])).toEqual([['a real prompt', 1]]);
    await session.shutdown();
  });
});

describe('turn usage', () => {
  it('counts cache reads and writes in the prompt tokens, and says estimated when a model call reported nothing', async () => {
    const echo = defineTool({ name: 'Echo', description: 'echo', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => ({ success: true, output: text }) });
    kernel = await createKernel({
      plugins: testPreset({
        turns: [
          { toolCalls: [{ id: 'e1', name: 'Echo', input: { text: 'x' } }], usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2000, cacheWriteTokens: 300 } },
          { text: 'cached', usage: { inputTokens: 20, outputTokens: 7, cacheReadTokens: 2300 } },
          { toolCalls: [{ id: 'e2', name: 'Echo', input: { text: 'y' } }] },
          { text: 'partly', usage: { inputTokens: 40, outputTokens: 2 } },
          { text: 'silent' },
        ],
        plugins: [toolsPlugin(echo)],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    const cached = await session.submit('one');
    expect(cached?.usage).toMatchObject({ kind: 'exact', promptTokens: 10 + 2000 + 300 + 20 + 2300, completionTokens: 12, cacheReadTokens: 4300, cacheWriteTokens: 300, totalTokens: 4630 + 12 });
    const partial = await session.submit('two');
    expect(partial?.usage).toMatchObject({ kind: 'estimated', promptTokens: 40, completionTokens: 2 });
    expect(partial?.usage).not.toHaveProperty('cacheReadTokens');
    // No model call reported usage: no usage at all.
    expect((await session.submit('three'))?.usage).toBeUndefined();
    await session.shutdown();
  });
});

describe('compact instructions across resume and fork', () => {
  it("keeps the context files' Compact Instructions in the record: a resumed or forked session compacts by them", async () => {
    await writeFile(join(dir, 'CLAUDE.md'), '# Rules\n\n## Compact Instructions\n\nKeep every file path.\n');
    const agentDir = join(dir, 'agent');
    const seen: Array<string | undefined> = [];
    const watch = definePlugin({ name: 'watch-compact', register: ({ hooks }) => void hooks.preCompact.tap('watch-compact', (context) => void seen.push(context.instructions)) });
    kernel = await createKernel({
      plugins: testPreset({
        turns: [{ text: 'one' }, { text: 'summary 1' }, { text: 'summary 2' }, { text: 'summary 3' }],
        replace: [jsonlSessionStore({ agentDir, terminalId: null })],
        plugins: [systemPrompt({ git: false, now: () => Date.UTC(2026, 10, 27) }), compaction(), watch],
      }),
    });
    const first = new InteractiveSession({ kernel, cwd: dir });
    await first.submit('hello');
    const id = first.getSessionId();
    await first.getSession().compact();
    await first.shutdown();
    const resumed = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: id });
    await resumed.whenReady();
    await resumed.getSession().compact();
    await resumed.shutdown();
    const forked = new InteractiveSession({ kernel, cwd: dir, resumeSessionId: id, forkSession: true });
    await forked.whenReady();
    await forked.getSession().compact();
    await forked.shutdown();
    expect(seen).toEqual(['Keep every file path.', 'Keep every file path.', 'Keep every file path.']);
  });
});

describe('compact() and shutdown({ reason, message }) on the facade', () => {
  it('compact(instructions) compacts by them and saves at once; shutdown records its message and hands its reason to sessionEnd', async () => {
    const store = new InMemorySessionStore();
    const seen: Array<string | undefined> = [];
    const watch = definePlugin({ name: 'watch-compact', register: ({ hooks }) => void hooks.preCompact.tap('watch-compact', (context) => void seen.push(context.instructions)) });
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'one' }, { text: 'the summary' }], store, plugins: [compaction(), watch] }) });
    const reasons: string[] = [];
    kernel.hooks.sessionEnd.tap('reasons', ({ reason }) => void reasons.push(reason));
    const session = new InteractiveSession({ kernel, cwd: dir });
    await session.submit('hello');
    const id = session.getSessionId();
    const before = (await store.load(id))!.messages.length;
    await session.compact('keep the greeting');
    expect(seen).toEqual(['keep the greeting']);
    // Saved by compact() itself, before any shutdown: another reader sees the compacted conversation.
    const saved = await store.load(id);
    expect(saved!.messages.length).toBeLessThan(before + 1);
    expect(JSON.stringify(saved!.messages)).toContain('the summary');
    await session.shutdown({ reason: 'logout', message: 'Signed out by the user.' });
    expect(reasons).toEqual(['logout']);
    const events = (await store.load(id))!.history.filter((entry) => entry.category === 'event' && entry.type === 'system');
    expect(events.at(-1)?.data).toEqual({ level: 'info', message: 'Signed out by the user.' });
  });
});

describe('shutdown and background tasks', () => {
  it("stops the session's background shell commands when it shuts down, unless told to leave them", async () => {
    const logDir = join(dir, 'logs');
    kernel = await createKernel({
      plugins: testPreset({
        turns: [
          { toolCalls: [{ name: 'Bash', input: { command: 'sleep 30', run_in_background: true } }] },
          { text: 'started' },
          { toolCalls: [{ name: 'Bash', input: { command: 'sleep 31', run_in_background: true } }] },
          { text: 'started too' },
        ],
        plugins: [...builtinTools(), backgroundRuntime({ shell: { logDir, killGraceMs: 200 } })],
      }),
    });
    const manager = kernel.get(BackgroundTaskManagerToken);
    const first = new InteractiveSession({ kernel, cwd: dir, permissionMode: 'bypassPermissions' });
    await first.submit('start it');
    const [task] = manager.list({ parentSessionId: first.getSessionId() });
    expect(task).toMatchObject({ status: 'running', kind: 'process' });
    await first.shutdown();
    expect(manager.get(task!.id)?.status).toBe('cancelled');

    const second = new InteractiveSession({ kernel, cwd: dir, permissionMode: 'bypassPermissions' });
    await second.submit('start another');
    const [kept] = manager.list({ parentSessionId: second.getSessionId() });
    await second.shutdown({ cancelBackgroundTasks: false });
    expect(manager.get(kept!.id)?.status).toBe('running');
    await kernel.shutdown();
    expect(manager.get(kept!.id)?.status).toBe('cancelled');
    kernel = undefined;
  });
});

describe('createQuery', () => {
  it('yields events then one result, on the scripted provider, in default permission mode', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: ['Hel', 'lo'], usage: { inputTokens: 5, outputTokens: 2 } }] });
    const messages: QueryMessage[] = [];
    for await (const message of createQuery({ prompt: 'hi', cwd: dir, provider })) messages.push(message);
    expect(messages.map((message) => message.type)).toEqual(['text_delta', 'text_delta', 'result']);
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', text: 'Hello', turns: 1, usage: { totalTokens: 7 } });
  });

  it('reports the cost at list prices, summed over the model calls, only when every call is priced', async () => {
    const echo = defineTool({ name: 'Echo', description: 'echo', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => ({ success: true, output: text }) });
    const run = async (provider: ScriptedProvider, model?: string): Promise<QueryMessage> => {
      const messages: QueryMessage[] = [];
      const plugins = testPreset({ provider, plugins: [toolsPlugin(echo)] });
      for await (const message of createQuery({ prompt: 'go', cwd: dir, plugins, ...(model === undefined ? {} : { model }) })) messages.push(message);
      return messages.at(-1)!;
    };
    const turns = () => [
      { toolCalls: [{ id: 'e1', name: 'Echo', input: { text: 'x' } }], usage: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 2000 } },
      { text: 'done', usage: { inputTokens: 1500, outputTokens: 100 } },
    ];
    // Sonnet 4.x: $3 in, $15 out, $0.30 cache read per million tokens.
    const priced = await run(new ScriptedProvider({ model: 'claude-sonnet-4-5', turns: turns() }));
    expect(priced).toMatchObject({ type: 'result', subtype: 'success', turns: 2 });
    expect((priced as { costUsd?: number }).costUsd).toBeCloseTo((1000 * 3 + 200 * 15 + 2000 * 0.3 + 1500 * 3 + 100 * 15) / 1e6, 10);
    // A name the price table does not know (a gateway's) is priced as the model asked for.
    const aliased = await run(new ScriptedProvider({ model: 'gateway-alias', turns: turns() }), 'claude-haiku-4-5');
    expect((aliased as { costUsd?: number }).costUsd).toBeCloseTo((1000 * 1 + 200 * 5 + 2000 * 0.1 + 1500 * 1 + 100 * 5) / 1e6, 10);
    // Unknown price, or a call without usage: no cost rather than a wrong one.
    expect(await run(new ScriptedProvider({ model: 'local-llama', turns: turns() }))).not.toHaveProperty('costUsd');
    const partial = turns();
    delete (partial[1] as { usage?: unknown }).usage;
    expect(await run(new ScriptedProvider({ model: 'claude-sonnet-4-5', turns: partial }))).not.toHaveProperty('costUsd');
  });

  it('one new session per call; a sessionId continues that stored session, whose history the model sees', async () => {
    const prompts: string[][] = [];
    const provider = new ScriptedProvider({
      turns: (request) => {
        prompts.push(request.messages.filter((message) => message.role === 'user').map((message) => JSON.stringify(message.content)));
        return { text: `answer ${prompts.length}` };
      },
    });
    kernel = await createKernel({ plugins: testPreset({ provider }) });
    const run = async (prompt: string, sessionId?: string) => {
      const messages: QueryMessage[] = [];
      for await (const message of createQuery({ prompt, kernel: kernel!, cwd: dir, ...(sessionId === undefined ? {} : { sessionId }) })) messages.push(message);
      return messages.at(-1) as QueryMessage & { sessionId: string; text: string };
    };
    const first = await run('remember 7');
    const second = await run('unrelated');
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(prompts[1]).toHaveLength(1);
    const continued = await run('what was the number?', first.sessionId);
    expect(continued).toMatchObject({ subtype: 'success', sessionId: first.sessionId, text: 'answer 3' });
    expect(prompts[2]).toHaveLength(2);
    expect(prompts[2]![0]).toContain('remember 7');
  });

  it('ends with an error result, not a throw, when the session cannot be set up (an unknown sessionId to continue)', async () => {
    kernel = await createKernel({ plugins: testPreset({ turns: [] }) });
    const messages: QueryMessage[] = [];
    for await (const message of createQuery({ prompt: 'go on', kernel, cwd: dir, sessionId: 'no-such-session' })) messages.push(message);
    expect(messages).toEqual([{ type: 'result', subtype: 'error', text: '', turns: 0, durationMs: expect.any(Number), sessionId: 'no-such-session', error: { message: expect.stringContaining('no-such-session'), code: 'session_not_found' } }]);
  });

  it('runs in the default permission mode unless told otherwise — never bypass', async () => {
    const modes: string[] = [];
    const watch = definePlugin({
      name: 'watch-mode',
      register({ hooks }) {
        hooks.userPromptSubmit.tap('watch-mode', (context) => {
          modes.push(context.session.getPermissionMode());
          return context;
        });
      },
    });
    kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], plugins: [watch] }) });
    for await (const _ of createQuery({ prompt: 'one', kernel, cwd: dir }));
    for await (const _ of createQuery({ prompt: 'two', kernel, cwd: dir, permissionMode: 'plan' }));
    expect(modes).toEqual(['default', 'plan']);
  });

  it('stops on abort with an interrupted result', async () => {
    const { tool, started } = gate();
    kernel = await createKernel({ plugins: testPreset({ turns: [{ toolCalls: [{ id: 'w', name: 'Wait', input: { label: 'x' } }] }], plugins: [toolsPlugin(tool)] }) });
    const controller = new AbortController();
    const messages: QueryMessage[] = [];
    for await (const message of createQuery({ prompt: 'go', kernel, cwd: dir, signal: controller.signal })) {
      messages.push(message);
      if (message.type === 'tool_start') {
        while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
        controller.abort();
      }
    }
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'interrupted' });
  });
});
