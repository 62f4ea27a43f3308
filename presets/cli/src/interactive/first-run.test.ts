import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingTerminal } from '@tessera/plugin-tui';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../io.js';
import { runFirstRunSetup } from './first-run.js';

const DOWN = '\x1b[B';
const ENTER = '\r';
let home: string;

afterEach(() => rmSync(home, { recursive: true, force: true }));

function io(env: Record<string, string> = {}): CliIO & { errors: string[] } {
  home = mkdtempSync(join(tmpdir(), 'tessera-first-run-'));
  const errors: string[] = [];
  return { stdout: () => undefined, stderr: (text) => void errors.push(text), cwd: home, env, home, errors };
}

/** The text as written, escapes removed and wrapped lines joined. */
const plain = (output: string): string => output.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\]8;;\x07/g, '').replace(/\s+/g, ' ');

const settle = (ms = 30): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function drive(terminal: RecordingTerminal, keys: string[]): Promise<void> {
  for (const key of keys) {
    await settle();
    for (const char of key.startsWith('\x1b') ? [key] : [...key]) terminal.type(char);
  }
}

describe('first-run setup', () => {
  it('the demo model needs nothing written', async () => {
    const terminal = new RecordingTerminal(80, 24);
    const cli = io();
    const result = runFirstRunSetup({ terminal, io: cli });
    await drive(terminal, [DOWN, DOWN, ENTER]);
    expect(await result).toBe('demo');
    expect(() => statSync(join(home, '.tessera', 'settings.json'))).toThrow();
  });

  it('an environment variable name is stored as a $ENV: reference, then probed', async () => {
    const terminal = new RecordingTerminal(80, 24);
    const cli = io({ WORK_ANTHROPIC_KEY: 'sk-ant-secret' });
    const probes: Array<{ url: string; headers: Record<string, string> }> = [];
    const fetch = (async (url: string, init: { headers: Record<string, string> }) => {
      probes.push({ url: String(url), headers: init.headers });
      return new Response('{}', { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const result = runFirstRunSetup({ terminal, io: cli, fetch });
    await drive(terminal, [ENTER, 'WORK_ANTHROPIC_KEY', ENTER]);
    expect(await result).toBe('profile');
    const settings = JSON.parse(readFileSync(join(home, '.tessera', 'settings.json'), 'utf8'));
    expect(settings).toEqual({ providers: { anthropic: { type: 'anthropic', apiKey: '$ENV:WORK_ANTHROPIC_KEY' } }, currentProvider: 'anthropic' });
    expect(probes[0]!.headers['x-api-key']).toBe('sk-ant-secret');
    expect(terminal.output).toContain('The provider answered');
    // The key itself never reaches the screen.
    expect(terminal.output).not.toContain('sk-ant-secret');
  });

  it('a pasted key is kept in a 0600 user settings file; a refused probe is reported and the settings kept', async () => {
    const terminal = new RecordingTerminal(80, 24);
    const cli = io();
    const fetch = (async () => new Response('{"error":"bad key"}', { status: 401 })) as unknown as typeof globalThis.fetch;
    const result = runFirstRunSetup({ terminal, io: cli, fetch });
    await drive(terminal, [DOWN, ENTER, 'http://127.0.0.1:11434/v1', ENTER, 'sk-pasted-0123456789', ENTER]);
    expect(await result).toBe('profile');
    const file = join(home, '.tessera', 'settings.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).providers.openai).toEqual({ type: 'openai', apiKey: 'sk-pasted-0123456789', baseURL: 'http://127.0.0.1:11434/v1' });
    expect(plain(terminal.output)).toContain('answered 401 (the key was refused)');
    expect(terminal.output).not.toContain('sk-pasted-0123456789');
  });

  it('Esc leaves without writing anything', async () => {
    const terminal = new RecordingTerminal(80, 24);
    const cli = io();
    const result = runFirstRunSetup({ terminal, io: cli });
    await drive(terminal, ['\x1b']);
    expect(await result).toBeUndefined();
    expect(() => statSync(join(home, '.tessera', 'settings.json'))).toThrow();
  });
});
