import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDoctorCommand } from './doctor.js';
import { runSubcommand, tempDirs } from './subcommand.test-helper.js';

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A home and a project with an instruction file of every source, and a project memory index. */
function setup(): { home: string; cwd: string; files: Record<'user' | 'project' | 'dotClaude' | 'agents' | 'local' | 'memory', string> } {
  const { home, cwd } = tempDirs('doctor', 'home', 'cwd');
  const files = {
    user: join(home, '.claude', 'CLAUDE.md'),
    project: join(cwd, 'CLAUDE.md'),
    dotClaude: join(cwd, '.claude', 'CLAUDE.md'),
    agents: join(cwd, 'AGENTS.md'),
    local: join(cwd, 'CLAUDE.local.md'),
    memory: join(cwd, '.tessera', 'memory', 'MEMORY.md'),
  };
  for (const [name, path] of Object.entries(files)) write(path, `# ${name}\n`);
  write(join(cwd, '.claude', 'settings.json'), '{}');
  return { home, cwd, files };
}

async function doctor(where: { home: string; cwd: string }, ...argv: string[]): Promise<{ code: number; report: { contextFiles: Array<{ path: string }>; settings: Array<{ file: string; scope: string }> }; stderr: string }> {
  const run = await runSubcommand(runDoctorCommand, ['--json', '--no-network', '--provider', 'demo', ...argv], where);
  return { code: run.code, report: run.stdout === '' ? { contextFiles: [], settings: [] } : JSON.parse(run.stdout), stderr: run.stderr };
}

/** The context files doctor lists inside the test's folders (a parent of the temp folder may have its own). */
const listed = (report: { contextFiles: Array<{ path: string }> }, where: { home: string; cwd: string }): string[] =>
  report.contextFiles.map((file) => file.path).filter((path) => path.startsWith(where.home) || path.startsWith(where.cwd));

describe('tessera doctor --setting-sources', () => {
  it('lists every source\'s context files, the memory index included, without the flag', async () => {
    const where = setup();
    const { code, report, stderr } = await doctor(where);
    expect(code, stderr).toBe(0);
    expect(listed(report, where).sort()).toEqual(Object.values(where.files).sort());
  });

  it('lists only the context files and settings layers of the sources named, as a run reads them', async () => {
    const where = setup();
    const { files } = where;
    const user = await doctor(where, '--setting-sources', 'user');
    expect(user.code, user.stderr).toBe(0);
    expect(listed(user.report, where)).toEqual([files.user]);
    expect(user.report.settings.map((layer) => layer.scope)).not.toContain('project');

    const project = await doctor(where, '--setting-sources', 'project');
    expect(listed(project.report, where).sort()).toEqual([files.agents, files.dotClaude, files.memory, files.project].sort());

    const local = await doctor(where, '--setting-sources=project,local');
    expect(listed(local.report, where)).toContain(files.local);
    expect(listed(local.report, where)).not.toContain(files.user);

    for (const none of [['--setting-sources', ''], ['--setting-sources=']]) {
      const run = await doctor(where, ...none);
      expect(run.code, run.stderr).toBe(0);
      expect(listed(run.report, where)).toEqual([]);
    }
  });

  it('refuses an unknown source with the run\'s message', async () => {
    const where = setup();
    const run = await doctor(where, '--setting-sources', 'user,policy');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("error: option '--setting-sources <sources>' argument 'policy' is invalid. Use a comma-separated list of user, project, local (\"\" for none).");
  });
});

describe('tessera doctor: MCP servers', () => {
  /** A project `.mcp.json` (one server approved in settings, one not, one disabled) and a user server in `~/.claude.json`. */
  function mcpSetup(): { home: string; cwd: string } {
    const { home, cwd } = tempDirs('doctor-mcp', 'home', 'cwd');
    write(join(cwd, '.mcp.json'), JSON.stringify({ mcpServers: { files: { command: 'node', args: ['files.js'] }, remote: { type: 'http', url: 'http://127.0.0.1:9/mcp' }, old: { command: 'node' } } }));
    write(join(cwd, '.claude', 'settings.json'), JSON.stringify({ enabledMcpjsonServers: ['files'], disabledMcpjsonServers: ['old'] }));
    write(join(home, '.claude.json'), JSON.stringify({ mcpServers: { helper: { command: 'node', args: ['helper.js'] } } }));
    return { home, cwd };
  }

  it('lists the servers a session would get, with whether each may start, and starts none', async () => {
    const where = mcpSetup();
    const run = await runSubcommand(runDoctorCommand, ['--json', '--no-network', '--provider', 'demo'], where);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { mcpServers: Array<Record<string, unknown>> };
    expect(report.mcpServers).toEqual([
      { name: 'files', scope: 'project', transport: 'stdio', status: 'enabled', file: join(where.cwd, '.mcp.json') },
      { name: 'helper', scope: 'user', transport: 'stdio', status: 'enabled', file: expect.any(String) },
      { name: 'old', scope: 'project', transport: 'stdio', status: 'disabled', file: join(where.cwd, '.mcp.json') },
      { name: 'remote', scope: 'project', transport: 'http', status: 'needs approval', file: join(where.cwd, '.mcp.json') },
    ]);
    const text = await runSubcommand(runDoctorCommand, ['--no-network', '--provider', 'demo'], where);
    expect(text.stdout).toContain('✓ files (stdio, project) from ');
    expect(text.stdout).toContain('? remote (http, project) from ');
    expect(text.stdout).toContain(': needs approval');
  });

  it('reads them from the sources --setting-sources names, as a run does', async () => {
    const where = mcpSetup();
    const run = await runSubcommand(runDoctorCommand, ['--json', '--no-network', '--provider', 'demo', '--setting-sources', 'user'], where);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { mcpServers: Array<{ name: string }> }).mcpServers.map((server) => server.name)).toEqual(['helper']);
  });
});
