import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// The interactive terminal end to end: the built `tessera` in a real tmux pane against the
// loopback Anthropic API, driven with send-keys and read with capture-pane.
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux) console.warn('tui-tmux.test.ts: tmux is not installed, so the terminal end-to-end suite is skipped (.ci/run installs it).');

const SOCKET = `tessera-test-${process.pid}`;
const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });

describe.skipIf(!hasTmux)('tessera in tmux', () => {
  let server: FakeAnthropicServer;
  let home: string;
  let workspace: string;

  const capture = (): string => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'main');
  const keys = (...sequence: string[]): void => void tmux('send-keys', '-t', 'main', ...sequence);
  const typeText = (text: string): void => void tmux('send-keys', '-t', 'main', '-l', text);
  async function waitFor(predicate: (screen: string) => boolean, what: string, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = capture();
      if (predicate(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}. Pane (last lines):\n${screen.split('\n').slice(-40).join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  function start(args: string[]): void {
    const env = [`HOME=${home}`, 'TESSERA_SESSION_LOG=0', 'ANTHROPIC_API_KEY=sk-test', `ANTHROPIC_BASE_URL=${server.baseURL}`, 'TERM=xterm-256color'];
    const command = `cd ${workspace} && env ${env.join(' ')} ${process.execPath} ${BIN} ${args.join(' ')}; echo "[exit $?]"; sleep 60`;
    tmux('new-session', '-d', '-s', 'main', '-x', '100', '-y', '30', command);
  }

  beforeAll(async () => {
    server = new FakeAnthropicServer();
    await server.listen();
    home = mkdtempSync(join(tmpdir(), 'tessera-tmux-home-'));
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-tmux-ws-')));
    execFileSync('git', ['init', '-q', workspace]);
  });

  afterEach(() => {
    spawnSync('tmux', ['-L', SOCKET, 'kill-session', '-t', 'main']);
  });

  afterAll(async () => {
    spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    await server.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  });

  it('streams, asks, interrupts, queues, runs commands, rewinds, exits and resumes', async () => {
    const file = join(workspace, 'hello.txt');
    server.reply(
      { text: ['Creating ', 'the file ', 'now.'], toolCalls: [{ name: 'Write', input: { file_path: file, content: 'hi from tmux\n' } }], usage: { input_tokens: 1200, output_tokens: 40 } },
      { text: ['The file ', 'is written.'], usage: { input_tokens: 1300, output_tokens: 10 } },
      { text: Array.from({ length: 200 }, (_, index) => `word${index} `), delayMs: 30 },
      { text: ['Answer to the queued prompt.'] },
      { text: ['Answer to the second queued prompt.'] },
    );
    start([]);
    await waitFor((screen) => screen.includes('manual mode on'), 'the prompt');

    // A prompt, streamed text, then an inline permission prompt answered "yes".
    typeText('write hello.txt');
    keys('Enter');
    await waitFor((screen) => screen.includes('Do you want to proceed?') && screen.includes('hi from tmux'), 'the permission prompt');
    keys('1');
    await waitFor((screen) => screen.includes('The file is written.'), 'the answer after approval');
    expect(readFileSync(file, 'utf8')).toBe('hi from tmux\n');
    expect(capture()).toContain('Creating the file now.');

    // A slow answer: a prompt typed meanwhile is queued; Esc interrupts and keeps what streamed.
    typeText('tell me a long story');
    keys('Enter');
    await waitFor((screen) => screen.includes('word5 '), 'streaming');
    typeText('queued question');
    keys('Enter');
    await waitFor((screen) => screen.includes('Queued: queued question'), 'the queued marker');
    keys('Escape');
    await waitFor((screen) => screen.includes('Interrupted'), 'the interruption');
    await waitFor((screen) => screen.includes('Answer to the queued prompt.'), 'the queued prompt answered');
    expect(capture()).toContain('word1 ');

    // Commands.
    typeText('/help');
    keys('Enter');
    await waitFor((screen) => screen.includes('/cost'), '/help');
    typeText('/cost');
    keys('Enter');
    await waitFor((screen) => /Tokens: \d+ in/.test(screen), '/cost');

    // /rewind lists the checkpoints; Esc Esc restores code and conversation.
    typeText('/rewind');
    keys('Enter');
    await waitFor((screen) => screen.includes('write hello.txt') && /\d+ file\(s\)/.test(screen), '/rewind list');
    keys('Escape');
    // A person's double press: two separate reads, not one ESC ESC sequence.
    await new Promise((resolve) => setTimeout(resolve, 150));
    keys('Escape');
    await waitFor((screen) => screen.includes('Rewind to before'), 'the rewind picker');
    // Type to filter the checkpoints down to the first prompt's.
    typeText('write hello');
    await waitFor((screen) => screen.includes('Filter: write hello'), 'the filtered picker');
    keys('Enter');
    await waitFor((screen) => screen.includes('Restore code and conversation'), 'the restore choices');
    keys('Enter');
    await waitFor((screen) => /deleted 1/.test(screen), 'the restore');
    expect(existsSync(file)).toBe(false);

    // Ctrl-C twice exits and prints how to resume.
    keys('C-c');
    keys('C-c');
    const exited = await waitFor((screen) => screen.includes('[exit 0]'), 'the exit');
    const id = /tessera -r ([\w-]+)/.exec(exited)?.[1];
    expect(id).toBeDefined();
    tmux('kill-session', '-t', 'main');

    // -r <id> resumes: the earlier conversation is on screen again.
    start(['-r', id!]);
    await waitFor((screen) => screen.includes('manual mode on'), 'the resumed prompt');
    typeText('/exit');
    keys('Enter');
    await waitFor((screen) => screen.includes('[exit 0]'), 'the exit after resume');
    tmux('kill-session', '-t', 'main');
  }, 90_000);

  it('-r with no id opens the session picker', async () => {
    server.reply({ text: ['picked up'] });
    start(['-r']);
    const picker = await waitFor((screen) => screen.includes('Resume a session'), 'the session picker');
    expect(picker).toMatch(/messages/);
    keys('Escape');
    await new Promise((resolve) => setTimeout(resolve, 150));
    typeText('/exit');
    keys('Enter');
    await waitFor((screen) => screen.includes('[exit 0]'), 'the exit');
    tmux('kill-session', '-t', 'main');
  }, 30_000);
});
