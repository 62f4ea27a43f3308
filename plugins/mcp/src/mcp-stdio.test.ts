import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@tessera/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpClientPool } from './mcp-client-pool.js';
import { promptCommandModule } from './mcp-prompt-commands.js';
import { EVERYTHING_BIN, FILESYSTEM_BIN, listSource, session, stdio, testPool, toolContext, until, type LogEntry } from './mcp.test-helper.js';

let pool: McpClientPool;
let logs: LogEntry[];
let tools: Tool[];
let dir: string;

const byName = (name: string): Tool => {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((candidate) => candidate.name).join(', ')}`);
  return tool;
};
const call = async (name: string, input: Record<string, unknown>) => (await byName(name).execute(input, toolContext())) as Awaited<ReturnType<Tool['execute']>>;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-mcp-fs-')));
  await writeFile(join(dir, 'hello.txt'), 'hello from disk\n');
  ({ pool, logs } = testPool({
    sources: [listSource([
      { name: 'everything', spec: stdio(EVERYTHING_BIN) },
      { name: 'fs', spec: stdio(FILESYSTEM_BIN, [dir]) },
    ])],
    startupTimeoutMs: 15_000,
  }));
  tools = await pool.tools(session(dir));
}, 30_000);

afterAll(async () => {
  await pool.close();
  await rm(dir, { recursive: true, force: true });
});

describe('server-everything over stdio', () => {
  it('lists its tools as mcp__everything__<tool> with their schemas', () => {
    expect(byName('mcp__everything__echo').parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(byName('mcp__everything__get-sum').description).toBe('Returns the sum of two numbers');
    expect(pool.servers().find((server) => server.name === 'everything')).toMatchObject({ status: 'connected', scope: 'sdk', transport: 'stdio' });
  });

  it('returns text, images, structured content and resource links', async () => {
    expect(await call('mcp__everything__get-sum', { a: 2, b: 40 })).toMatchObject({ success: true, output: expect.stringContaining('42') });
    const image = await call('mcp__everything__get-tiny-image', {});
    expect(Array.isArray(image.output) && image.output.some((block) => block.type === 'image' && block.mediaType === 'image/png' && block.data.length > 20)).toBe(true);
    const structured = await call('mcp__everything__get-structured-content', { location: 'Chicago' });
    expect(structured).toMatchObject({ success: true, data: { structuredContent: { temperature: 36 } } });
    const links = await call('mcp__everything__get-resource-links', { count: 2 });
    expect(links.success).toBe(true);
    expect(String(links.output)).toContain('[resource link ');
  });

  it('turns invalid arguments (an isError result) into a failed tool result', async () => {
    const result = await call('mcp__everything__get-sum', { a: 'two' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/Input validation error|invalid/i);
  });

  it('reports progress of a long operation', async () => {
    const progress: unknown[] = [];
    const result = await byName('mcp__everything__trigger-long-running-operation').execute({ duration: 0.3, steps: 3 }, { ...toolContext(), reportProgress: (entry) => progress.push(entry) });
    expect(result.success).toBe(true);
    // Three steps; on a loaded machine the check tolerates a late notification being dropped after the result.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatchObject({ message: '1/3', data: { progress: 1, total: 3 } });
    expect((progress[0] as { fraction: number }).fraction).toBeCloseTo(1 / 3);
  });

  it('lists resources and reads one', async () => {
    const resources = pool.resources().filter((resource) => resource.server === 'everything');
    expect(resources.length).toBeGreaterThan(0);
    const read = (await pool.readResource('everything', resources[0]!.uri)) as { contents: unknown[] };
    expect(read.contents.length).toBeGreaterThan(0);
  });

  it('offers its prompts as commands with their arguments', async () => {
    const module = promptCommandModule(pool);
    const names = module.systemCommands!.map((command) => command.name);
    expect(names).toContain('mcp__everything__args-prompt');
    expect(module.commandSources![0]!.getCommands().find((command) => command.name === 'mcp__everything__args-prompt')).toMatchObject({ argumentHint: '<city> [state]' });
    const command = module.systemCommands!.find((candidate) => candidate.name === 'mcp__everything__args-prompt')!;
    const context = {} as never;
    expect(await command.execute(context, 'Boston MA')).toMatchObject({
      success: true,
      data: { text: "What's weather in Boston, MA?" },
      // The host sends the prompt's text to the model.
      effects: [{ type: 'prompt-submit-requested', text: "What's weather in Boston, MA?" }],
    });
    expect(await command.execute(context, 'city=Paris')).toMatchObject({ success: true, data: { text: "What's weather in Paris?" } });
    expect(await command.execute(context, '')).toMatchObject({ success: false, message: expect.stringContaining('Missing required argument city') });
    const dispatcher = module.systemCommands!.find((candidate) => candidate.name === 'mcp-prompt')!;
    expect(await dispatcher.execute(context, 'mcp__everything__args-prompt Rome')).toMatchObject({ success: true, data: { text: "What's weather in Rome?" } });
  });

  it('keeps server stderr out of the terminal and in the log', async () => {
    await until(() => logs.some((entry) => entry.code === 'TESSERA_MCP_STDERR'), 5_000, 'stderr lines');
    expect(logs.filter((entry) => entry.code === 'TESSERA_MCP_STDERR').every((entry) => entry.severity === 'info')).toBe(true);
  });
});

describe('server-filesystem over stdio', () => {
  it('reads a file inside the allowed directory and refuses one outside', async () => {
    const read = await call('mcp__fs__read_text_file', { path: join(dir, 'hello.txt') });
    expect(read).toMatchObject({ success: true, output: expect.stringContaining('hello from disk') });
    const outside = await call('mcp__fs__read_text_file', { path: '/etc/hostname' });
    expect(outside.success).toBe(false);
    expect(outside.error).toMatch(/denied|outside|allowed/i);
  });
});
