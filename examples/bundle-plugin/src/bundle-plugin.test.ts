import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// This folder is a Claude Code marketplace. The test publishes it as a git repository, installs
// its plugin with the built `tessera` bin under a temporary HOME, and runs each part of the
// plugin against a loopback Anthropic API whose replies are scripted.

const EXAMPLE = fileURLToPath(new URL('..', import.meta.url));
const REPOSITORY_ROOT = join(EXAMPLE, '..', '..');
const BIN = join(REPOSITORY_ROOT, 'presets', 'cli', 'bin', 'tessera.js');
const PLUGIN_ID = 'release-kit@tessera-examples';
const MCP_TOOL = 'mcp__plugin_release-kit_versions__next_version';

let root: string;
let home: string;
let project: string;
let marketplaceUrl: string;
let commit: string;
let installOutput = '';
let server: FakeAnthropicServer;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built bin in the project folder, with the fake API as the Anthropic endpoint. */
function tessera(argv: string[]): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...argv], { cwd: project, env: environment() });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function environment(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    TESSERA_SESSION_LOG: '0',
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: server?.baseURL ?? 'http://127.0.0.1:9',
    // The first model call waits for the plugin's MCP server up to this long (default 5 s): room
    // for a slow start on a busy machine; a ready server ends the wait at once.
    MCP_TIMEOUT: '30000',
  };
}

/** A print-mode run in stream-json: every output line, parsed. */
async function printRun(prompt: string, ...flags: string[]): Promise<Array<Record<string, unknown>>> {
  const run = await tessera(['-p', prompt, '--output-format', 'stream-json', '--verbose', ...flags]);
  expect(run.code, run.stderr).toBe(0);
  return run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The `tool_result` blocks of a stream-json run, by tool_use_id. */
function toolResults(lines: Array<Record<string, unknown>>): Map<string, { content: string; is_error: boolean }> {
  const results = new Map<string, { content: string; is_error: boolean }>();
  for (const line of lines) {
    if (line.type !== 'user') continue;
    for (const block of (line.message as { content: Array<{ tool_use_id: string; content: string; is_error: boolean }> }).content) results.set(block.tool_use_id, block);
  }
  return results;
}

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('examples/bundle-plugin installed into tessera from a git marketplace', () => {
  beforeAll(async () => {
    if (!existsSync(join(REPOSITORY_ROOT, 'presets', 'cli', 'dist', 'main.js'))) throw new Error('The tessera bin is not built: run `npm run build` at the repository root first.');
    root = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-bundle-example-')));
    home = join(root, 'home');
    project = join(root, 'project');
    mkdirSync(home);
    mkdirSync(project);

    // Publish the marketplace as it would be on a git host: its files, committed.
    const repository = join(root, 'marketplace');
    for (const entry of ['.claude-plugin', 'plugins', 'README.md']) cpSync(join(EXAMPLE, entry), join(repository, entry), { recursive: true });
    git(repository, 'init', '-q', '-b', 'main');
    git(repository, 'add', '-A');
    git(repository, '-c', 'user.name=Example', '-c', 'user.email=example@example.test', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'release-kit 0.1.0');
    commit = git(repository, 'rev-parse', 'HEAD');
    marketplaceUrl = `file://${repository}`;

    // The MCP server imports @modelcontextprotocol/sdk and zod by name, and Tessera does not
    // install a plugin's Node dependencies: the workspace's node_modules, placed above HOME, stands
    // in for a server shipped with its dependencies (see the README).
    symlinkSync(join(REPOSITORY_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');

    const added = await tessera(['plugin', 'marketplace', 'add', marketplaceUrl, '--yes']);
    expect(added.code, added.stderr).toBe(0);
    const installed = await tessera(['plugin', 'install', PLUGIN_ID, '--yes']);
    expect(installed.code, installed.stderr).toBe(0);
    installOutput = installed.stdout;
  }, 60_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  beforeEach(async () => {
    server = new FakeAnthropicServer();
    await server.listen();
  });

  afterEach(async () => {
    await server.close();
  });

  it('installs release-kit with its command, skill, agent, hook and MCP server, pinned to the commit', () => {
    expect(installOutput).toContain(`Installed ${PLUGIN_ID} 0.1.0`);
    for (const part of ['commands: release-kit:notes', 'skills: release-kit:semver', 'agents: release-kit:reviewer', 'hooks: PreToolUse', 'MCP servers: versions']) expect(installOutput).toContain(part);
    const plugins = join(home, '.tessera', 'plugins');
    const known = JSON.parse(readFileSync(join(plugins, 'known_marketplaces.json'), 'utf8'));
    expect(known['tessera-examples'].source).toEqual({ source: 'git', url: marketplaceUrl });
    const record = JSON.parse(readFileSync(join(plugins, 'installed_plugins.json'), 'utf8')).plugins[PLUGIN_ID][0];
    expect(record).toMatchObject({ scope: 'user', version: '0.1.0', gitCommitSha: commit, installPath: join(plugins, 'cache', 'tessera-examples', 'release-kit', '0.1.0') });
    expect(existsSync(join(record.installPath, 'servers', 'versions.mjs'))).toBe(true);
    expect(JSON.parse(readFileSync(join(home, '.tessera', 'settings.json'), 'utf8')).enabledPlugins).toEqual({ [PLUGIN_ID]: true });
  });

  it('the command: /release-kit:notes 1.5.0, typed in an ACP editor, sends the command body with $ARGUMENTS to the model', async () => {
    // Print mode sends a prompt to the model as typed; slash commands run where a user types
    // them: the terminal UI and ACP (`tessera acp`), both through InteractiveSession.executeCommand.
    server.reply({ text: ['## 1.5.0\n\n### Added\n- Release notes.'] });
    const child = spawn(process.execPath, [BIN, 'acp'], { cwd: project, env: environment() });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const waiting = new Map<number, (message: { result?: Record<string, unknown>; error?: unknown }) => void>();
    const updates: Array<{ sessionUpdate: string; content?: { text?: string } }> = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line);
      if (message.method === 'session/update') updates.push(message.params.update);
      else if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    });
    let nextId = 0;
    const request = (method: string, params: object) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const id = ++nextId;
        waiting.set(id, (message) => (message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result!)));
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });

    const closed = new Promise((resolve) => child.on('close', resolve));
    let answer: Record<string, unknown>;
    try {
      await request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await request('session/new', { cwd: project, mcpServers: [] });
      answer = await request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/release-kit:notes 1.5.0' }] });
    } finally {
      child.stdin.end(); // the agent exits when its input ends
    }
    expect(await closed, stderr).toBe(0);

    expect(answer.stopReason).toBe('end_turn');
    const sent = JSON.stringify((server.bodies[0]!.messages as unknown[])[0]);
    expect(sent).toContain('Draft the release notes for version 1.5.0.');
    expect(sent).toContain('Check that 1.5.0 is the right number');
    expect(updates.some((update) => update.sessionUpdate === 'agent_message_chunk' && update.content?.text?.includes('### Added'))).toBe(true);
  }, 60_000);

  it('the skill and the agent: listed in the system prompt, activated by the model, the agent runs with its own prompt and tools', async () => {
    server.reply(
      { toolCalls: [{ name: 'tessera_command_skills', input: { args: 'release-kit:semver' } }] },
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: 'release-kit:reviewer Check the 1.5.0 notes against the commits.' } }] },
      { text: ['The notes match the commits.'] }, // the reviewer's own model call
      { text: ['1.5.0 is ready to tag.'] },
    );
    const lines = await printRun('Prepare the 1.5.0 release', '--allowedTools', 'tessera_command_skills', 'tessera_command_agent');

    const [main, , reviewer] = server.bodies as Array<{ system: Array<{ text: string }>; tools: Array<{ name: string }>; messages: unknown[] }>;
    expect(main!.system[0]!.text).toContain('- release-kit:semver: Choose the next version number');
    const results = [...toolResults(lines).values()];
    expect(results[0]).toMatchObject({ is_error: false });
    expect(results[0]!.content).toContain('Pick the next version from the current one');
    // The plugin agent: its markdown body is the system prompt, its `tools` line the tool list.
    expect(reviewer!.system[0]!.text).toContain('You review release notes before a release is tagged.');
    expect(reviewer!.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['Read', 'Grep', 'Glob', 'Bash']));
    expect(reviewer!.tools.map((tool) => tool.name)).not.toContain('Write');
    expect(JSON.stringify(reviewer!.messages)).toContain('Check the 1.5.0 notes against the commits.');
    expect(results[1]).toMatchObject({ is_error: false, content: 'The notes match the commits.' });
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: '1.5.0 is ready to tag.' });
  }, 60_000);

  it("the MCP server and the hook: the model calls next_version, allowed by the project's rule; the PreToolUse hook logs the call", async () => {
    // Claude Code's project settings file, unchanged: the rule names the plugin-scoped tool.
    mkdirSync(join(project, '.claude'), { recursive: true });
    writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: [MCP_TOOL] } }));
    server.reply({ toolCalls: [{ name: MCP_TOOL, input: { current: '1.4.2', change: 'minor' } }] }, { text: ['The next version is 1.5.0.'] });
    const lines = await printRun('Which version comes after 1.4.2 for a new feature?');

    const init = lines[0] as { session_id: string; mcp_servers: Array<{ name: string }>; plugins: Array<{ name: string }> };
    expect(init.mcp_servers.map((entry) => entry.name)).toEqual(['plugin:release-kit:versions']);
    expect(init.plugins.map((plugin) => plugin.name)).toEqual(['release-kit']);
    expect((server.bodies[0]!.tools as Array<{ name: string }>).map((tool) => tool.name)).toContain(MCP_TOOL);
    expect([...toolResults(lines).values()]).toEqual([expect.objectContaining({ content: '1.5.0', is_error: false })]);

    const log = readFileSync(join(home, '.tessera', 'plugins', 'data', 'release-kit-tessera-examples', 'tool-log.jsonl'), 'utf8');
    const entries = log.trim().split('\n').map((line) => JSON.parse(line) as { tool_name: string; tool_input: unknown; session_id: string });
    expect(entries.at(-1)).toMatchObject({ tool_name: MCP_TOOL, tool_input: { current: '1.4.2', change: 'minor' }, session_id: init.session_id });
  }, 60_000);
});

/** The fenced blocks of a guide with the file each quotes: a `<!-- from … -->` line just before the fence, or a `// from …` / `# from …` first line. */
function excerpts(markdown: string): Array<{ line: number; file: string | undefined; text: string }> {
  const lines = markdown.split('\n');
  const blocks: Array<{ line: number; file: string | undefined; text: string }> = [];
  for (let index = 0; index < lines.length; index += 1) {
    if (!lines[index]!.startsWith('```')) continue;
    const opening = index;
    const body: string[] = [];
    for (index += 1; index < lines.length && !lines[index]!.startsWith('```'); index += 1) body.push(lines[index]!);
    const before = /^<!-- from (\S+) -->$/.exec(lines[opening - 1] ?? '');
    const first = /^(?:\/\/|#) from (\S+)$/.exec(body[0] ?? '');
    blocks.push({ line: opening + 1, file: before?.[1] ?? first?.[1], text: (first ? body.slice(1) : body).join('\n') });
  }
  return blocks;
}

describe('docs/guide/ship-a-bundle-plugin.md', () => {
  it("quotes this example's files as they are", () => {
    const guide = join(REPOSITORY_ROOT, 'docs', 'guide', 'ship-a-bundle-plugin.md');
    const blocks = excerpts(readFileSync(guide, 'utf8'));
    expect(blocks.length).toBeGreaterThan(10);
    for (const block of blocks) {
      expect(block.file, `${guide}:${block.line} names no file`).toMatch(/^examples\/bundle-plugin\//);
      expect(readFileSync(join(REPOSITORY_ROOT, block.file!), 'utf8'), `${guide}:${block.line} is not in ${block.file}`).toContain(block.text);
    }
  });
});
