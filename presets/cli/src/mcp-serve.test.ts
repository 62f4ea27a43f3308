import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { runMcpServeCommand } from './subcommands/mcp-serve.js';
import { runSubcommand, tempDirs } from './subcommands/subcommand.test-helper.js';

/** The built subcommand (`npx tsc -b presets/cli`): `main.ts` does not route `tessera mcp` to it yet. */
const BUILT = fileURLToPath(new URL('../dist/subcommands/mcp-serve.js', import.meta.url));

/** A tiny program that runs the built subcommand over the process's own stdio, as `tessera mcp serve` will. */
const LAUNCHER = `
const { runMcpServeCommand } = await import(process.argv[2]);
const code = await runMcpServeCommand(process.argv.slice(3), {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  cwd: process.cwd(),
  env: process.env,
  home: process.env.HOME,
  stdin: process.stdin,
  stdinIsTTY: false,
  stdoutIsTTY: false,
});
process.stderr.write(\`exit \${code}\n\`);
process.stdout.write('', () => process.exit(code));
`;

function text(result: object): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((block) => block.text ?? '').join('\n');
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawns the server in a project with two notes and connects an MCP client (answering permission prompts with `answer`). */
async function connect(options: { elicit: boolean }): Promise<{ client: Client; transport: StdioClientTransport; dirs: { home: string; cwd: string }; stderr: () => string; asked: string[] }> {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: build it with npx tsc -b presets/cli`);
  const dirs = tempDirs('mcp-serve', 'home', 'cwd');
  writeFileSync(join(dirs.cwd, 'ideas.md'), '# Ideas\n\nShip the MCP server.\n');
  writeFileSync(join(dirs.cwd, 'todo.md'), '# Todo\n\nWrite tests first.\n');
  const launcher = join(dirs.home, 'serve.mjs');
  writeFileSync(launcher, LAUNCHER);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [launcher, pathToFileURL(BUILT).href, '--provider', 'demo'],
    cwd: dirs.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: dirs.home, TESSERA_SESSION_LOG: '0' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const client = new Client({ name: 'claude-code-stand-in', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  const asked: string[] = [];
  if (options.elicit) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { decision: 'allow' } };
    });
  }
  await client.connect(transport);
  return { client, transport, dirs, stderr: () => stderr, asked };
}

describe('tessera mcp serve', () => {
  it('prints its help and refuses a prompt argument', async () => {
    const dirs = tempDirs('mcp-serve-help', 'home', 'cwd');
    const help = await runSubcommand(runMcpServeCommand, ['--help'], dirs);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: tessera mcp serve [options]');
    expect(help.stdout).toContain('"args": ["mcp", "serve"]');
    const prompt = await runSubcommand(runMcpServeCommand, ['do', 'things'], dirs);
    expect(prompt.code).toBe(2);
    expect(prompt.stderr).toContain('unexpected argument "do"');
    const unknown = await runSubcommand(runMcpServeCommand, ['--nope'], dirs);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--nope'");
  });

  it('serves stdio in process until stdin ends', async () => {
    const dirs = tempDirs('mcp-serve-inproc', 'home', 'cwd');
    const stdin = new PassThrough();
    let stdout = '';
    let stderr = '';
    const running = runMcpServeCommand(['--provider', 'demo'], {
      stdout: (chunk) => void (stdout += chunk),
      stderr: (chunk) => void (stderr += chunk),
      cwd: dirs.cwd,
      home: dirs.home,
      env: { TESSERA_SESSION_LOG: '0' },
      stdin,
    });
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
    await expect.poll(() => stdout, { timeout: 10_000 }).toContain('"serverInfo":{"name":"tessera"');
    stdin.end();
    expect(await running).toBe(0);
    expect(stderr).toContain(`serving ${dirs.cwd} over stdio`);
  });

  it('runs the demo model as an MCP tool in a spawned process: progress, elicited permissions, a saved session', async () => {
    const { client, dirs, asked, stderr } = await connect({ elicit: true });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['prompt', 'abort', 'command_compact']));
      const progress: Progress[] = [];
      const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'summarise my notes' } }, undefined, { onprogress: (update) => progress.push(update), timeout: 30_000 });
      expect(result.isError).toBeFalsy();
      const output = result.structuredContent as { sessionId: string; response: string; toolCalls: Array<{ name: string; status: string }> };
      expect(output.response).toContain('Done: SUMMARY.md');
      expect(output.toolCalls.map((call) => call.name)).toEqual(['Bash', 'Glob', 'Read', 'Read', 'Write']);
      expect(output.toolCalls.every((call) => call.status === 'success')).toBe(true);
      expect(asked.some((message) => message.includes('Bash (pwd)'))).toBe(true);
      expect(asked.some((message) => message.includes('Write'))).toBe(true);
      expect(progress.map((update) => update.message).join('')).toContain('(demo model');
      expect(readFileSync(join(dirs.cwd, 'SUMMARY.md'), 'utf8')).toContain('Ideas');
      await client.close();
      // stdin ended: the server saved the session and exited.
      await expect.poll(() => filesUnder(join(dirs.home, '.tessera')).some((file) => file.includes(output.sessionId)), { timeout: 10_000 }).toBe(true);
    } finally {
      await client.close();
    }
    expect(stderr()).toContain('over stdio');
    expect(stderr()).toContain('exit 0');
  });

  it('denies a permission ask when the client cannot elicit (the demo model reports the rule to add) and saves on SIGTERM', async () => {
    const { client, dirs, transport, stderr } = await connect({ elicit: false });
    try {
      const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'summarise my notes' } }, undefined, { timeout: 30_000 });
      const output = result.structuredContent as { response: string; toolCalls: Array<{ name: string; status: string }> };
      expect(output.toolCalls).toEqual([{ name: 'Bash', target: 'pwd', status: 'denied' }]);
      expect(output.response).toContain('did not go through');
      expect(output.response).toContain('add "Bash(pwd)" to permissions.allow');
      expect(text(result)).toContain('Session: ');
      const pid = transport.pid!;
      process.kill(pid, 'SIGTERM');
      await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
      expect(stderr()).toContain('exit 0');
      const { sessionId } = result.structuredContent as { sessionId: string };
      expect(filesUnder(join(dirs.home, '.tessera')).some((file) => file.includes(sessionId))).toBe(true);
    } finally {
      await client.close();
    }
  });
});
