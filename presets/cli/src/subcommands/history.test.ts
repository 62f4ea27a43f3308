import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { HistoryStorage } from '@tessera/plugin-prompt-history';
import { runSubcommand, tempDirs } from './subcommand.test-helper.js';
import { runHistoryCommand } from './history.js';

let home: string;
let cwd: string;

beforeEach(() => {
  ({ home, cwd } = tempDirs('history', 'home', 'cwd'));
});

const run = (...argv: string[]) => runSubcommand(runHistoryCommand, argv, { cwd, home });

const databasePath = () => join(home, '.tessera', 'agent', 'history.db');

/** Records prompts through the plugin's own store, oldest first. */
async function record(prompts: Array<[string, string]>): Promise<void> {
  const storage = new HistoryStorage({ path: databasePath() });
  for (const [prompt, directory] of prompts) {
    storage.add(prompt, directory);
    await storage.flush();
  }
  await storage.close();
}

describe('history search', () => {
  it('prints matches newest first with time and directory', async () => {
    await record([
      ['fix the parser for empty input', '/work/parser'],
      ['write docs for the CLI', '/work/docs'],
      ['parser: add a test for unicode', '/work/parser'],
    ]);
    const { code, stdout } = await run('search', 'parser');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+DIRECTORY\s+PROMPT$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d\s+\/work\/parser\s+parser: add a test for unicode$/);
    expect(lines[2]).toContain('fix the parser for empty input');
    expect(stdout).not.toContain('write docs');
  });

  it('joins several words, honours --limit and prints JSON', async () => {
    await record([
      ['refactor session store', '/a'],
      ['refactor session tree', '/b'],
      ['refactor the loop', '/c'],
    ]);
    const { code, stdout } = await run('search', 'refac', 'sess', '--limit', '1', '--json');
    expect(code).toBe(0);
    const matches = JSON.parse(stdout) as Array<{ prompt: string; cwd: string; createdAt: string }>;
    expect(matches).toEqual([{ id: 2, prompt: 'refactor session tree', cwd: '/b', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
  });

  it('treats a missing database as an empty history and does not create one', async () => {
    const { code, stdout } = await run('search', 'anything');
    expect(code).toBe(0);
    expect(stdout).toContain('No prompt history yet');
    expect(existsSync(databasePath())).toBe(false);
    expect((await run('search', 'anything', '--json')).stdout).toBe('[]\n');
  });

  it('fails with exit 1 naming the file when the database cannot be opened', async () => {
    mkdirSync(join(home, '.tessera', 'agent'), { recursive: true });
    writeFileSync(databasePath(), 'this is not a database, just text that is long enough to have a header '.repeat(20));
    const { code, stderr } = await run('search', 'x');
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot open the prompt history ${databasePath()}`);
  });

  it('rejects a missing text and a bad --limit as usage errors', async () => {
    const missing = await run('search');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing <text>');
    expect(missing.stderr).toContain('usage: tessera history search <text>');
    const limit = await run('search', 'x', '--limit', 'ten');
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain('--limit must be a whole number from 1 to 1000');
  });

  it('answers --help on stdout', async () => {
    const { code, stdout } = await run('search', '--help');
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: tessera history search <text> [--limit N] [--json]');
  });
});
