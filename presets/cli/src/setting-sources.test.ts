import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalRouter } from '@tessera/session-hub';
import { defaultFlags, parseArgs, type CliFlags } from './args.js';
import { composeHost } from './host-sessions.js';
import { runInteractive } from './interactive/run-interactive.js';
import type { CliIO } from './io.js';
import { runHeadless } from './print/headless.js';
import { runMainIn, type MainRun } from './run-main.test-helper.js';

// `--setting-sources` beyond settings files: which CLAUDE.md files, skills and agents a run reads
// (as the built bin against the loopback Anthropic API), and `--permission-mode` values.

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');

let home: string;
let workspace: string;
let server: FakeAnthropicServer;

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const skill = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\nDo the ${name} thing.\n`;
const agent = (name: string) => `---\nname: ${name}\ndescription: The ${name} agent\n---\nYou are ${name}.\n`;

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'tessera-sources-home-'));
  workspace = mkdtempSync(join(tmpdir(), 'tessera-sources-ws-'));
  write(join(workspace, 'CLAUDE.md'), 'PROJECT-CLAUDE-MARKER\n');
  write(join(workspace, '.claude', 'CLAUDE.md'), 'PROJECT-DOT-CLAUDE-MARKER\n');
  write(join(workspace, 'CLAUDE.local.md'), 'LOCAL-CLAUDE-MARKER\n');
  write(join(workspace, '.claude', 'skills', 'project-skill', 'SKILL.md'), skill('project-skill'));
  write(join(workspace, '.tessera', 'skills', 'project-tessera-skill', 'SKILL.md'), skill('project-tessera-skill'));
  write(join(workspace, '.claude', 'agents', 'project-agent.md'), agent('project-agent'));
  write(join(workspace, '.tessera', 'agents', 'project-tessera-agent.md'), agent('project-tessera-agent'));
  write(join(home, '.claude', 'CLAUDE.md'), 'USER-CLAUDE-MARKER\n');
  write(join(home, '.claude', 'skills', 'user-skill', 'SKILL.md'), skill('user-skill'));
  write(join(home, '.claude', 'agents', 'user-agent.md'), agent('user-agent'));
  server = new FakeAnthropicServer();
  await server.listen();
});

afterEach(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

async function runAgainst(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = spawn(process.execPath, [BIN, ...argv], {
    cwd: workspace,
    env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL },
  });
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  run.stdin.end('');
  const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
  return { code, stdout, stderr };
}

/** The run's system/init line and the system prompt of its one model call. */
async function runWith(sources: string[]): Promise<{ init: Record<string, any>; system: string }> {
  server.reply({ text: ['done'] });
  const before = server.bodies.length;
  const run = await runAgainst(['-p', 'hi', '--output-format', 'stream-json', '--verbose', ...sources]);
  expect(run.code, run.stderr).toBe(0);
  const init = run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>)
    .find((message) => message.type === 'system' && message.subtype === 'init')!;
  const body = server.bodies[before]!;
  return { init, system: typeof body.system === 'string' ? body.system : JSON.stringify(body.system) };
}

const PROJECT = ['PROJECT-CLAUDE-MARKER', 'PROJECT-DOT-CLAUDE-MARKER'];
const names = (list: unknown): string[] => (list as Array<string | { name: string }>).map((item) => (typeof item === 'string' ? item : item.name));

describe('--setting-sources governs CLAUDE.md files, skills and agents', () => {
  it('reads every source without the flag', async () => {
    const { init, system } = await runWith([]);
    for (const marker of [...PROJECT, 'LOCAL-CLAUDE-MARKER', 'USER-CLAUDE-MARKER']) expect(system).toContain(marker);
    expect(names(init.skills)).toEqual(expect.arrayContaining(['project-skill', 'project-tessera-skill', 'user-skill']));
    expect(init.slash_commands).toEqual(expect.arrayContaining(['project-skill', 'user-skill']));
    expect(init.agents).toEqual(expect.arrayContaining(['project-agent', 'project-tessera-agent', 'user-agent']));
  }, 60_000);

  it('user: no project or local CLAUDE.md, project skills or project agents', async () => {
    const { init, system } = await runWith(['--setting-sources', 'user']);
    for (const marker of [...PROJECT, 'LOCAL-CLAUDE-MARKER']) expect(system).not.toContain(marker);
    expect(system).toContain('USER-CLAUDE-MARKER');
    expect(names(init.skills)).toContain('user-skill');
    expect(names(init.skills)).not.toContain('project-skill');
    expect(names(init.skills)).not.toContain('project-tessera-skill');
    expect(init.slash_commands).not.toContain('project-skill');
    expect(system).not.toContain('project-skill');
    expect(init.agents).toContain('user-agent');
    expect(init.agents).not.toContain('project-agent');
    expect(init.agents).not.toContain('project-tessera-agent');
    expect(system).not.toContain('project-agent');
    // Built-in agents are not a setting source's.
    expect(init.agents).toContain('general-purpose');
  }, 60_000);

  it('project: no user CLAUDE.md, user skills or user agents; CLAUDE.local.md needs local', async () => {
    const { init, system } = await runWith(['--setting-sources', 'project']);
    for (const marker of PROJECT) expect(system).toContain(marker);
    expect(system).not.toContain('LOCAL-CLAUDE-MARKER');
    expect(system).not.toContain('USER-CLAUDE-MARKER');
    expect(names(init.skills)).toEqual(expect.arrayContaining(['project-skill', 'project-tessera-skill']));
    expect(names(init.skills)).not.toContain('user-skill');
    expect(init.agents).toEqual(expect.arrayContaining(['project-agent', 'project-tessera-agent']));
    expect(init.agents).not.toContain('user-agent');

    const local = await runWith(['--setting-sources', 'project,local']);
    expect(local.system).toContain('LOCAL-CLAUDE-MARKER');
  }, 60_000);

  it('"": none of them', async () => {
    const { init, system } = await runWith(['--setting-sources', '']);
    for (const marker of [...PROJECT, 'LOCAL-CLAUDE-MARKER', 'USER-CLAUDE-MARKER']) expect(system).not.toContain(marker);
    expect(names(init.skills).filter((name) => name.includes('skill'))).toEqual([]);
    expect(init.agents.filter((name: string) => name.includes('-agent'))).toEqual([]);
  }, 60_000);
});

describe('--permission-mode', () => {
  const runMain = (argv: string[]): Promise<MainRun> => runMainIn({ cwd: workspace, home }, argv);

  it('manual is an alias of default', async () => {
    expect(parseArgs(['--permission-mode', 'manual']).permissionMode).toBe('manual');
    const run = await runMain(['-p', 'hi', '--provider', 'demo', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'manual']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.split('\n')[0]!)).toMatchObject({ type: 'system', subtype: 'init', permissionMode: 'default' });
  });

  it('auto (the classifier mode) is refused, naming the modes there are, in every command that parses the flag', async () => {
    const message = /--permission-mode auto .*not supported.*default, manual, acceptEdits, plan, bypassPermissions, dontAsk/;
    expect(() => parseArgs(['--permission-mode', 'auto'])).toThrow(message);
    expect(() => parseArgs(['--permission-mode=auto'])).toThrow(message);
    for (const argv of [['-p', 'hi', '--provider', 'demo', '--permission-mode', 'auto'], ['--permission-mode', 'auto']]) {
      const run = await runMain(argv);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
  });

  it('another unknown mode is refused when the flags are parsed (so interactive, acp and mcp serve refuse it too), listing the choices', async () => {
    expect(() => parseArgs(['--permission-mode', 'yolo'])).toThrow("argument 'yolo' is invalid. Allowed choices are default, manual, acceptEdits, plan, bypassPermissions, dontAsk.");
    const run = await runMain(['-p', 'hi', '--provider', 'demo', '--permission-mode', 'yolo']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("argument 'yolo' is invalid");
  });

  it('CliFlags built without parseArgs (an embedder\'s) are refused where they are used, with the same message, in every mode', async () => {
    const cases: Array<[string, string]> = [
      ['yolo', "error: option '--permission-mode <mode>' argument 'yolo' is invalid. Allowed choices are default, manual, acceptEdits, plan, bypassPermissions, dontAsk."],
      ['auto', "error: --permission-mode auto (Claude Code's classifier mode) is not supported by Tessera. Use one of default, manual, acceptEdits, plan, bypassPermissions, dontAsk."],
    ];
    for (const [value, message] of cases) {
      expect(() => parseArgs(['--permission-mode', value])).toThrow(message);
      const flags: CliFlags = { ...defaultFlags(), print: true, provider: 'demo', positionals: ['hi'], permissionMode: value };
      let stdout = '';
      let stderr = '';
      const io: CliIO = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: workspace, home, env: { TESSERA_SESSION_LOG: '0' }, stdinIsTTY: true, stdoutIsTTY: true };
      expect(await runHeadless(flags, io)).toBe(1);
      expect(await runInteractive({ ...flags, print: false }, io)).toBe(1);
      expect(stderr.split('\n').filter((line) => line !== '')).toEqual([message, message]);
      expect(stdout).toBe('');
      await expect(composeHost({ flags, io, approvals: new ApprovalRouter() })).rejects.toThrow(message);
    }
  });
});
