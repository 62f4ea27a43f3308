import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from './main.js';
import { SqliteSessionStore } from './sqlite-session-store.js';
import { GIT_ENV, makeRepository } from './test-repository.test-helper.js';

// The `relnotes` bin as a user runs it: the committed launcher over the built dist, a real git
// repository, and the Anthropic provider talking to a loopback fake of the Messages API.

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(PACKAGE, 'bin', 'relnotes.js');

let repository: string;
let home: string;

beforeEach(() => {
  repository = makeRepository();
  home = mkdtempSync(join(tmpdir(), 'relnotes-home-'));
});

function runBin(argv: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd: repository, env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ...GIT_ENV, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the relnotes bin', () => {
  let server: FakeAnthropicServer;
  beforeAll(() => {
    if (!existsSync(join(PACKAGE, 'dist', 'main.js'))) throw new Error('examples/custom-agent is not built: run npx tsc -b examples/custom-agent (or npm run build) first.');
  });
  beforeEach(async () => {
    server = new FakeAnthropicServer();
    await server.listen();
  });
  afterEach(async () => {
    await server.close();
  });

  it('drafts notes with /release-notes against the Messages API, exit code 0', async () => {
    server.reply(
      { text: ['Reading the log.'], toolCalls: [{ id: 'toolu_log', name: 'GitLog', input: { range: 'v1.0..HEAD' } }] },
      { text: ['Release v1.1 adds JSON output.\n\n### Features\n', '- Add --json output'] },
    );
    const run = await runBin(['/release-notes', 'v1.0..HEAD', '--verbose'], { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL });
    expect(run.stderr).toContain('Drafting release notes for v1.0..HEAD (3 commits).');
    expect(run).toMatchObject({ code: 0, stdout: 'Release v1.1 adds JSON output.\n\n### Features\n- Add --json output\n' });
    expect(run.stderr).toMatch(/→ GitLog\(v1\.0\.\.HEAD\)\n {2}✓/);

    const [first, second] = server.bodies as Array<{ system: unknown; tools: Array<{ name: string }>; messages: unknown[] }>;
    expect(JSON.stringify(first!.system)).toContain('Release notes style guide');
    expect(first!.tools.map((tool) => tool.name)).toContain('GitLog');
    expect(JSON.stringify(second!.messages)).toContain('feat: add --json output (Ada Example, 2025-03-02)');

    const sessionId = /Session (\S+)/.exec(run.stderr)![1]!;
    const store = new SqliteSessionStore(join(home, '.relnotes', 'sessions.db'));
    expect(store.load(sessionId)?.messages).toHaveLength(4);
    store.close();
  });

  it('exits 1 on a range git does not know, without calling the model', async () => {
    const run = await runBin(['/release-notes', 'v7..HEAD'], { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('git does not know the range "v7..HEAD"');
    expect(server.requests).toHaveLength(0);
  });
});

describe('main', () => {
  async function runMain(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await main(argv, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: repository, home, env });
    return { code, stdout, stderr };
  }

  it('prints the help generated from the option table', async () => {
    const run = await runMain(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: relnotes [options]');
    expect(run.stdout).toMatch(/ {4}--db <file> +SQLite file sessions are kept in/);
  });

  it('exits 2 on a command line it cannot read, 1 without a model', async () => {
    expect(await runMain(['--colour', 'x'])).toMatchObject({ code: 2, stderr: expect.stringContaining("Unknown option '--colour'") });
    expect(await runMain([])).toMatchObject({ code: 2, stderr: expect.stringContaining('Give a prompt or a command') });
    expect(await runMain(['-p', 'hi'])).toMatchObject({ code: 1, stderr: expect.stringContaining('relnotes needs a model. Set ANTHROPIC_API_KEY') });
  });
});
