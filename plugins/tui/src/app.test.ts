import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { visibleWidth } from '@mariozechner/pi-tui';
import { BackgroundTasks, type BackgroundTaskNotice } from '@tessera/contracts';
import { definePlugin } from '@tessera/kernel';
import type { ScriptedRequest } from '@tessera/plugin-provider-scripted';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY, startHarness, type Harness } from './tui.test-helper.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const lastUserText = (request: ScriptedRequest): string => {
  const tool = [...request.messages].reverse().find((message) => message.role === 'tool');
  return JSON.stringify(tool?.content ?? '');
};

/** Types a slash command and sends it (a second Enter when the first one took a completion). */
async function submit(text: string): Promise<void> {
  await harness!.type(text);
  await harness!.press(KEY.enter);
  await harness!.settle(60);
  const editor = harness!.screen.lines().find((line) => line.startsWith(' ') && line.includes(text.split(' ')[0]!) && !line.includes('⎿'));
  if (editor !== undefined && editor.trim().startsWith(text.split(' ')[0]!)) await harness!.press(KEY.enter);
}

describe('TesseraTui', () => {
  it('streams Markdown, shows a tool row with its output, and keeps the transcript above the prompt', async () => {
    harness = await startHarness({
      rules: { allow: ['Bash(echo:*)'] },
      turns: [
        { text: ['# Plan\n', 'Run **one** command:\n\n', '```js\nconst answer = 42;\n```\n'], toolCalls: [{ name: 'Bash', input: { command: 'echo tool-output-line' } }] },
        { text: 'All done.' },
      ],
    });
    await harness.type('do it');
    await harness.press(KEY.enter);
    const screen = await harness.waitFor((text) => text.includes('All done.'), 'the final answer');
    expect(screen).toContain('> do it');
    expect(screen).toContain('Plan');
    expect(screen).toContain('const answer = 42;');
    expect(screen).toMatch(/Bash\(echo tool-output-line\)/);
    expect(screen).toContain('1 line of output');
    expect(screen).toContain('tool-output-line');
    // Markdown markers are rendered, not printed.
    expect(screen).not.toContain('**one**');
    // The prompt and the status line stay at the bottom.
    const lines = harness.screen.lines();
    expect(lines.some((line) => line.includes('scripted-model') && line.includes('manual mode on'))).toBe(true);
  });

  it('shows a TodoWrite call as the checklist it left: done struck through, the active item in its present form', async () => {
    const todos = [
      { content: 'Read the code', status: 'completed', activeForm: 'Reading the code' },
      { content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
      { content: 'Run the tests', status: 'pending', activeForm: 'Running the tests' },
    ];
    harness = await startHarness({ turns: [{ toolCalls: [{ name: 'TodoWrite', input: { todos } }] }, { text: 'On it.' }] });
    await harness.type('fix it');
    await harness.press(KEY.enter);
    const screen = await harness.waitFor((text) => text.includes('On it.'), 'the answer');
    expect(screen).toContain('Updated todos (1/3 done)');
    expect(screen).toContain('☒ Read the code');
    expect(screen).toContain('◼ Fixing the bug');
    expect(screen).toContain('☐ Run the tests');
  });

  it('asks inline before a call that needs approval; "yes" runs it', async () => {
    let dir = '';
    harness = await startHarness({ turns: (request) => (request.index === 0 ? { toolCalls: [{ name: 'Write', input: { file_path: join(dir, 'created.txt'), content: 'hello from the tool\n' } }] } : { text: 'Wrote it.' }) });
    dir = harness.dir;
    await harness.type('write the file');
    await harness.press(KEY.enter);
    const prompt = await harness.waitFor((text) => text.includes('Do you want to proceed?'), 'the permission prompt');
    expect(prompt).toContain('Write created.txt');
    expect(prompt).toContain('+ hello from the tool');
    // Typing while the prompt is open goes to the prompt, not the editor.
    await harness.press('1');
    await harness.waitFor((text) => text.includes('Wrote it.'), 'the answer after approval');
    expect(await readFile(join(harness.dir, 'created.txt'), 'utf8')).toBe('hello from the tool\n');
  });

  it('"always" saves the suggested rule; "no" sends the typed reason to the model', async () => {
    const seen: string[] = [];
    harness = await startHarness({
      turns: (request) => {
        if (request.index === 0) return { toolCalls: [{ name: 'Bash', input: { command: 'ls -la' } }] };
        if (request.index === 1) return { toolCalls: [{ name: 'Bash', input: { command: 'rm -rf build' } }] };
        seen.push(lastUserText(request));
        return { text: 'Understood.' };
      },
    });
    await harness.type('go');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Do you want to proceed?') && text.includes('ls -la'), 'the first prompt');
    await harness.press('2');
    await harness.waitFor((text) => text.includes('rm -rf build') && text.includes('Do you want to proceed?'), 'the second prompt');
    expect(harness.savedRules).toEqual(['Bash(ls -la)']);
    await harness.press('3');
    await harness.type('keep the build folder');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Understood.'), 'the answer after the refusal');
    expect(seen[0]).toContain('keep the build folder');
    expect(harness.screen.all().join('\n')).toContain('Saved Bash(ls -la) to .tessera/settings.local.json');
  });

  it('Esc interrupts a streaming turn and keeps the partial text', async () => {
    harness = await startHarness({ turns: [{ text: ['first part. ', 'second part. ', ...Array.from({ length: 50 }, () => 'more. ')], delayMs: 40 }] });
    await harness.type('talk');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('second part.'), 'streamed text');
    await harness.press(KEY.escape);
    const screen = await harness.waitFor((text) => text.includes('Interrupted'), 'the interruption note');
    expect(screen).toContain('first part.');
    expect(harness.session.isExecuting()).toBe(false);
  });

  it('queues one prompt while a turn runs and refuses a second with a visible message', async () => {
    const prompts: string[] = [];
    harness = await startHarness({
      turns: (request) => {
        const last = request.messages[request.messages.length - 1];
        prompts.push(typeof last?.content === 'string' ? last.content : '');
        return request.index === 0 ? { text: ['slow ', 'answer ', 'here'], delayMs: 150 } : { text: 'second answer' };
      },
    });
    await harness.type('first');
    await harness.press(KEY.enter);
    await harness.type('second');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Queued: second'), 'the queued marker');
    await harness.type('third');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('A prompt is already queued'), 'the refusal');
    await harness.waitFor((text) => text.includes('second answer'), 'the queued prompt run');
    expect(prompts).toEqual(['first', 'second']);
    // The refused prompt is still in the editor.
    expect(harness.screen.text()).toContain('third');
  });

  it('Shift+Tab cycles permission modes and shows the mode', async () => {
    harness = await startHarness();
    await harness.press(KEY.shiftTab);
    expect(harness.screen.text()).toContain('accept edits on');
    expect(harness.session.getSession().getPermissionMode()).toBe('acceptEdits');
    await harness.press(KEY.shiftTab);
    expect(harness.screen.text()).toContain('plan mode on');
    await harness.press(KEY.shiftTab);
    // bypassPermissions is not in the cycle without --allow-dangerously-skip-permissions.
    expect(harness.session.getSession().getPermissionMode()).toBe('default');
  });

  it('Ctrl-C twice exits, Ctrl-D exits on an empty prompt only', async () => {
    harness = await startHarness();
    await harness.press(KEY.ctrlC);
    expect(harness.screen.text()).toContain('Press Ctrl-C again to exit');
    expect(harness.exits).toEqual([]);
    await harness.press(KEY.ctrlC);
    expect(harness.exits).toEqual([0]);
    await harness.close();
    harness = await startHarness();
    await harness.type('draft');
    await harness.press(KEY.ctrlD);
    await harness.press(KEY.ctrlD);
    expect(harness.exits).toEqual([]);
    await harness.press(KEY.ctrlC);
    await harness.press(KEY.ctrlD);
    await harness.press(KEY.ctrlD);
    expect(harness.exits).toEqual([0]);
  });

  it('runs slash commands, shows the palette with descriptions, and reports unknown ones', async () => {
    harness = await startHarness();
    await harness.type('/hel');
    await harness.settle(120);
    expect(harness.screen.text()).toMatch(/help\s+.*command/i);
    await harness.press(KEY.escape);
    await harness.press(KEY.ctrlC);
    await harness.type('/help');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('/compact'), '/help output');
    await harness.type('/nosuch');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Unknown command /nosuch'), 'the unknown-command message');
  });

  it('! runs a shell command through the permission rules and adds its output to the conversation', async () => {
    harness = await startHarness({ rules: { allow: ['Bash(echo:*)'] }, turns: [{ text: 'seen' }] });
    await harness.type('!echo shell-says-hi');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('shell-says-hi') && text.includes('1 line of output'), 'the shell output');
    const history = harness.session.getMessages();
    expect(JSON.stringify(history)).toContain('<bash-stdout>shell-says-hi');
    // A command the rules do not allow asks first.
    await harness.type('!touch made-by-shell');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Do you want to proceed?'), 'the approval for !touch');
    await harness.press(KEY.escape);
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Denied'), 'the refusal');
    expect(existsSync(join(harness.dir, 'made-by-shell'))).toBe(false);
  });

  it('Esc Esc opens rewind: restoring code and conversation undoes the edit and the turn', async () => {
    let dir = '';
    harness = await startHarness({
      rules: { allow: ['Edit', 'Write'] },
      turns: (request) => (request.index === 0 ? { toolCalls: [{ name: 'Write', input: { file_path: join(dir, 'notes.md'), content: 'changed\n' } }] } : { text: 'edited' }),
    });
    dir = harness.dir;
    await harness.type('change the notes');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('edited'), 'the turn');
    expect(await readFile(join(harness.dir, 'notes.md'), 'utf8')).toBe('changed\n');
    await harness.press(KEY.escape);
    await harness.press(KEY.escape);
    await harness.waitFor((text) => text.includes('Rewind to before'), 'the checkpoint picker');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Restore code and conversation'), 'the restore choices');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('deleted 1'), 'the restore note');
    expect(existsSync(join(harness.dir, 'notes.md'))).toBe(false);
    expect(harness.session.getMessages()).toHaveLength(0);
  });

  it('@ completes workspace files fuzzily and leaves out what .gitignore ignores', async () => {
    harness = await startHarness();
    const { dir } = harness;
    execFileSync('git', ['init', '-q', dir]);
    mkdirSync(join(dir, 'src', 'parser'), { recursive: true });
    mkdirSync(join(dir, 'secret'));
    writeFileSync(join(dir, 'src', 'parser', 'tokenizer.ts'), '');
    writeFileSync(join(dir, 'secret', 'tokens.txt'), '');
    writeFileSync(join(dir, '.gitignore'), 'secret/\n');
    await harness.type('look at @tokeniz');
    const screen = await harness.waitFor((text) => text.includes('src/parser/tokenizer.ts'), 'the mention suggestion');
    expect(screen).not.toContain('secret/tokens.txt');
    await harness.press(KEY.tab);
    await harness.settle(60);
    expect(harness.screen.text()).toContain('look at @src/parser/tokenizer.ts');
  });

  it('background tasks: a live row at the bottom while running, a frozen one in the transcript when done', async () => {
    let notify: ((event: BackgroundTaskNotice) => void) | undefined;
    const fakeTasks = definePlugin({
      name: 'fake-background',
      provides: [BackgroundTasks],
      register: ({ bind }) => void bind(BackgroundTasks).toConstantValue({ subscribe: (listener: (event: BackgroundTaskNotice) => void) => ((notify = listener), () => undefined) } as unknown as BackgroundTasks),
    });
    harness = await startHarness({ plugins: [fakeTasks] });
    notify!({ type: 'background_task_created', taskId: 'task-7', description: 'npm run watch' });
    notify!({ type: 'background_task_started', taskId: 'task-7' });
    notify!({ type: 'background_task_text_delta', taskId: 'task-7', delta: 'noise' });
    await harness.settle();
    let lines = harness.screen.lines();
    const statusIndex = lines.findLastIndex((line) => line.includes('scripted-model'));
    const taskIndex = lines.findIndex((line) => line.includes('task-7'));
    expect(lines[taskIndex]).toContain('npm run watch [running]');
    expect(taskIndex).toBeLessThan(statusIndex);
    expect(lines[statusIndex]).toContain('1 task');
    notify!({ type: 'background_task_completed', taskId: 'task-7' });
    await harness.settle();
    lines = harness.screen.lines();
    expect(lines.join('\n')).toContain('npm run watch [completed]');
    expect(lines.findLast((line) => line.includes('scripted-model'))).not.toContain('task');
  });

  it('applies command effects: /statusline hides and shows the row and the branch, /rename and /language reach the session, /plugin shows the manager', async () => {
    harness = await startHarness({ app: { gitBranch: 'feature-x', pluginManager: async () => 'demo@local 1.0.0 — enabled (user)' } });
    const statusRow = () => harness!.screen.lines().find((line) => line.includes('manual mode on'));
    expect(statusRow()).toContain('⎇ feature-x');
    await submit('/statusline branch off');
    await harness.waitFor(() => statusRow() !== undefined && !statusRow()!.includes('feature-x'), 'the status line without the branch');
    await submit('/statusline off');
    await harness.waitFor(() => statusRow() === undefined, 'the status line hidden');
    await submit('/statusline on');
    await harness.waitFor(() => statusRow() !== undefined, 'the status line back');
    expect(statusRow()).not.toContain('feature-x');

    await submit('/rename tidy up');
    await harness.waitFor((text) => text.includes('Session renamed to "tidy up"'), 'the rename message');
    expect(harness.session.getName()).toBe('tidy up');
    await submit('/language Deutsch');
    await harness.waitFor((text) => text.includes('Replies will be in Deutsch.'), 'the language message');
    expect(harness.session.getSession().getSystemMessage()).toContain('- Response language: Deutsch');

    await submit('/plugin');
    await harness.waitFor((text) => text.includes('demo@local 1.0.0 — enabled (user)'), 'the plugin list');
  });

  it('/reset (where it is not /clear) asks first, then has the host put the settings aside and exits', async () => {
    const resets: string[] = [];
    harness = await startHarness({ app: { switchSession: undefined, resetSettings: async () => (resets.push('reset'), 'Moved the settings aside.') } });
    await submit('/reset');
    await harness.waitFor((text) => text.includes('Reset your user settings to the defaults?'), 'the confirmation');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Settings kept.'), 'the default answer keeps them');
    expect(resets).toEqual([]);
    expect(harness.exits).toEqual([]);
    await submit('/reset');
    await harness.waitFor((text) => text.includes('Reset your user settings'), 'the confirmation again');
    await harness.press(KEY.down);
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('Moved the settings aside.'), 'the host line');
    expect(resets).toEqual(['reset']);
    expect(harness.exits).toEqual([0]);
  });

  it('marks a compaction in the transcript', async () => {
    harness = await startHarness();
    harness.session.getSession().emit({ type: 'compact', trigger: 'auto', summary: 'summary', before: undefined, after: undefined });
    await harness.settle();
    expect(harness.screen.text()).toContain('Conversation compacted (auto)');
  });

  it("runs the user's statusLine command with Claude Code's JSON and shows its first line", async () => {
    const seen = join(tmpdir(), `tessera-statusline-${process.pid}-${Date.now()}.json`);
    harness = await startHarness({ app: { statusLine: { command: `cat > ${seen}; printf 'custom status line\\nsecond line'` } } });
    await harness.waitFor((text) => text.includes('custom status line'), 'the custom status line', 5000);
    expect(harness.screen.text()).not.toContain('second line');
    const input = JSON.parse(readFileSync(seen, 'utf8')) as { session_id: string; model: { display_name: string }; permission_mode: string; workspace: { current_dir: string } };
    expect(input).toMatchObject({ session_id: harness.session.getSessionId(), model: { display_name: 'scripted-model' }, permission_mode: 'default', workspace: { current_dir: harness.dir } });
    rmSync(seen, { force: true });
  });

  it('a bracketed paste arrives as one chunk: a large one is collapsed on screen and sent whole', async () => {
    const seen: string[] = [];
    harness = await startHarness({
      turns: (request) => {
        const last = request.messages[request.messages.length - 1];
        seen.push(typeof last?.content === 'string' ? last.content : '');
        return { text: 'got it' };
      },
    });
    const pasted = Array.from({ length: 30 }, (_, index) => `line ${index} of the log`).join('\n');
    harness.terminal.type(`\x1b[200~${pasted}\x1b[201~`);
    await harness.settle();
    expect(harness.screen.text()).toMatch(/\[paste #1 \+30 lines\]/i);
    // The Enter inside the paste did not submit it.
    expect(seen).toEqual([]);
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('got it'), 'the answer');
    expect(seen).toEqual([pasted]);
  });

  it('\\+Enter and Shift+Enter start a new line instead of sending', async () => {
    const seen: string[] = [];
    harness = await startHarness({ turns: (request) => (seen.push(String(request.messages.at(-1)?.content)), { text: 'ok' }) });
    await harness.type('first\\');
    await harness.press(KEY.enter);
    await harness.type('second');
    await harness.press('\x1b[13;2u');
    await harness.type('third');
    expect(seen).toEqual([]);
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('ok'), 'the answer');
    expect(seen).toEqual(['first\nsecond\nthird']);
  });

  it('Ctrl-R searches prompt history', async () => {
    harness = await startHarness({ app: { recentPrompts: () => ['fix the login bug', 'write tests for parser', 'explain the cache'] } });
    await harness.press(KEY.ctrlR);
    await harness.type('pars');
    expect(harness.screen.text()).toContain("(reverse-i-search)`pars': write tests for parser");
    await harness.press(KEY.enter);
    expect(harness.screen.text()).toContain('write tests for parser');
  });

  it('redraws correctly after a resize down to 40×10, wide characters measured', async () => {
    harness = await startHarness({ turns: [{ text: '你好，世界 👍🏽 — a line long enough to wrap several times in a narrow terminal window.' }] });
    await harness.type('hi');
    await harness.press(KEY.enter);
    await harness.waitFor((text) => text.includes('你好'), 'the reply');
    harness.screen.resize(40, 10);
    harness.terminal.resize(40, 10);
    await harness.settle(80);
    const lines = harness.screen.lines();
    expect(lines).toHaveLength(10);
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(40);
    expect(lines.join('\n')).toContain('scripted-model');
  });
});
