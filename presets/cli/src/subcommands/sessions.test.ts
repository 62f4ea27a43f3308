import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ISessionRecord, Message } from '@tessera/contracts';
import { JsonlSessionStore, sessionDirFor } from '@tessera/plugin-session-store-jsonl';
import { runSubcommand, tempDirs } from './subcommand.test-helper.js';
import { runSessionsCommand } from './sessions.js';

let home: string;
let cwd: string;
let other: string;

beforeEach(() => {
  ({ home, cwd, other } = tempDirs('sessions', 'home', 'cwd', 'other'));
});

const run = (...argv: string[]) => runSubcommand(runSessionsCommand, argv, { cwd, home });

const agentDir = () => join(home, '.tessera', 'agent');

/** Writes a session the way the CLI's store does (kernel messages in, pi JSONL out). */
async function saveSession(id: string, sessionCwd: string, messages: Message[], name?: string): Promise<string> {
  const store = new JsonlSessionStore({ agentDir: agentDir(), terminalId: null, onWarning: () => undefined });
  const now = new Date().toISOString();
  const record: ISessionRecord = { id, cwd: sessionCwd, createdAt: now, updatedAt: now, messages, history: [], ...(name === undefined ? {} : { name }) };
  await store.save(record);
  await store.close();
  const dir = sessionDirFor(sessionCwd, agentDir());
  const file = readdirSync(dir).find((name) => name.endsWith(`_${id}.jsonl`));
  return join(dir, file!);
}

const longOutput = Array.from({ length: 10 }, (_, index) => `line ${index + 1}`).join('\n');

const conversation = (prompt: string): Message[] => [
  { role: 'user', content: prompt },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'call-1', name: 'Bash', input: { command: 'ls -la', description: 'list files' } },
    ],
    state: 'complete',
    stopReason: 'tool_use',
  },
  { role: 'tool', content: [{ type: 'tool_result', toolUseId: 'call-1', toolName: 'Bash', content: longOutput, isError: false }] },
  { role: 'assistant', content: [{ type: 'text', text: 'All done.' }], state: 'complete', stopReason: 'end_turn' },
];

describe('sessions list', () => {
  it('lists the sessions of the cwd by default, every project with --all', async () => {
    await saveSession('here-1', cwd, conversation('Fix the parser bug'), 'parser work');
    await saveSession('there-1', other, conversation('Write the docs'));

    const own = await run('list');
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/^ID\s+NAME\s+UPDATED\s+MESSAGES\s+FIRST PROMPT/);
    expect(own.stdout).toContain('here-1');
    expect(own.stdout).toContain('parser work');
    expect(own.stdout).toContain('Fix the parser bug');
    expect(own.stdout).not.toContain('there-1');

    const all = await run('list', '--all');
    expect(all.stdout).toContain('here-1');
    expect(all.stdout).toContain('there-1');
    expect(all.stdout).toContain('DIRECTORY');
  });

  it('prints a JSON array with the message count and first prompt', async () => {
    await saveSession('here-1', cwd, conversation('Fix the parser bug'));
    const { code, stdout } = await run('list', '--json');
    expect(code).toBe(0);
    const list = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: 'here-1', cwd, messageCount: 4, firstPrompt: 'Fix the parser bug' });
  });

  it('says so when the cwd has no sessions, and refuses --cwd-only with --all', async () => {
    expect((await run('list')).stdout).toContain('No sessions for');
    const both = await run('list', '--cwd-only', '--all');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--cwd-only and --all cannot be combined');
    expect(both.stderr).toContain('usage: tessera sessions list');
  });

  it('still lists a damaged file, with a warning naming the file and line', async () => {
    const file = await saveSession('damaged', cwd, conversation('Fix the parser bug'));
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[3] = '{"type":"message", broken';
    writeFileSync(file, lines.join('\n'));

    const { code, stdout, stderr } = await run('list');
    expect(code).toBe(0);
    expect(stdout).toContain('damaged');
    expect(stderr).toContain(`warning: ${file}:4:`);
  });
});

describe('sessions show', () => {
  it('prints prompts, replies, tool calls with their first argument and shortened results', async () => {
    await saveSession('here-1', cwd, conversation('Fix the parser bug'));
    const { code, stdout } = await run('show', 'here-1');
    expect(code).toBe(0);
    expect(stdout).toContain('> Fix the parser bug');
    expect(stdout).toContain('⏺ Let me look.');
    expect(stdout).toContain('⏺ Bash(ls -la)');
    expect(stdout).toContain('⎿  line 1');
    expect(stdout).toContain('… +6 lines');
    expect(stdout).not.toContain('line 10');
    expect(stdout).toContain('⏺ All done.');
  });

  it('shows the whole conversation of a file with a bad line in the middle, and warns', async () => {
    const file = await saveSession('damaged', cwd, conversation('Fix the parser bug'));
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[3] = 'not json at all';
    writeFileSync(file, lines.join('\n'));

    const { code, stdout, stderr } = await run('show', 'damaged');
    expect(code).toBe(0);
    expect(stderr).toContain(`${file}:4: not JSON`);
    // The reply after the bad line lost its parent; the prompt before it is still shown.
    expect(stdout).toContain('> Fix the parser bug');
    expect(stdout).toContain('⏺ All done.');
    expect(stdout).not.toContain('⎿  line 1');
  });

  it('fails with exit 1 for an unknown id and exit 2 without one', async () => {
    const unknown = await run('show', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no session nope; see `tessera sessions list`');
    const missing = await run('show');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing <id>');
  });
});

describe('sessions export', () => {
  it('writes the raw file bytes for jsonl, to stdout or -o', async () => {
    const file = await saveSession('here-1', cwd, conversation('Fix the parser bug'));
    const toStdout = await run('export', 'here-1', '--format', 'jsonl');
    expect(toStdout.stdout).toBe(readFileSync(file, 'utf8'));

    const { code } = await run('export', 'here-1', '--format', 'jsonl', '-o', 'copy.jsonl');
    expect(code).toBe(0);
    expect(readFileSync(join(cwd, 'copy.jsonl')).equals(readFileSync(file))).toBe(true);
  });

  it('renders Markdown by default', async () => {
    await saveSession('here-1', cwd, conversation('Fix the parser bug'), 'parser work');
    const { code, stdout } = await run('export', 'here-1');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^# parser work\n/);
    expect(stdout).toContain('## User\n\nFix the parser bug');
    expect(stdout).toContain('**Tool call:** `Bash`');
    expect(stdout).toContain('"command": "ls -la"');
    expect(stdout).toContain('line 10');
  });

  it('renders a self-contained HTML page with everything escaped', async () => {
    await saveSession('here-1', cwd, conversation('<script>alert("x")</script> & <img src=http://example.com/a.png>'));
    const { code } = await run('export', 'here-1', '--format', 'html', '-o', 'page.html');
    expect(code).toBe(0);
    const page = readFileSync(join(cwd, 'page.html'), 'utf8');
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#60;img');
    // No element can load anything: no script, image or link tags, no src/href attributes.
    expect(page).not.toMatch(/<(script|img|link|iframe)\b/i);
    expect(page).not.toMatch(/\s(src|href)=["']/i);
    expect(page).toContain("default-src 'none'");
  });

  it('refuses an unknown format with exit 2', async () => {
    await saveSession('here-1', cwd, conversation('x'));
    const { code, stderr } = await run('export', 'here-1', '--format', 'pdf');
    expect(code).toBe(2);
    expect(stderr).toContain('--format must be one of md, jsonl, html');
  });
});

describe('sessions rm', () => {
  it("deletes only that session's file", async () => {
    const target = await saveSession('abc', cwd, conversation('one'));
    const lookalike = await saveSession('x_abc', cwd, conversation('two'));
    const { code, stdout } = await run('rm', 'abc');
    expect(code).toBe(0);
    expect(stdout).toContain('Deleted session abc');
    expect(existsSync(target)).toBe(false);
    expect(existsSync(lookalike)).toBe(true);
  });

  it('refuses ids that are not session ids before touching any path', async () => {
    const kept = await saveSession('abc', cwd, conversation('one'));
    for (const id of ['../abc', '..', '/etc/passwd', '*']) {
      const { code, stderr } = await run('rm', id);
      expect(code).toBe(2);
      expect(stderr).toContain('Invalid session id');
    }
    expect(existsSync(kept)).toBe(true);
  });

  it('reports an unknown id with exit 1', async () => {
    const { code, stderr } = await run('rm', 'nope');
    expect(code).toBe(1);
    expect(stderr).toContain('no session nope; see `tessera sessions list`');
  });
});

describe('sessions usage', () => {
  it('prints help to stdout with exit 0', async () => {
    const group = await run('--help');
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('tessera sessions export <id> [--format md|jsonl|html] [-o file]');
    const action = await run('rm', '-h');
    expect(action.code).toBe(0);
    expect(action.stdout).toContain('Usage: tessera sessions rm <id>');
  });

  it('answers unknown options and actions with exit 2 and a usage line', async () => {
    const option = await run('list', '--bogus');
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Unknown option '--bogus'");
    expect(option.stderr).toContain('usage: tessera sessions list');
    const action = await run('frobnicate');
    expect(action.code).toBe(2);
    expect(action.stderr).toContain('unknown action "frobnicate"');
  });
});
