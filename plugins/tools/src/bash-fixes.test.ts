import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackgroundProcessRequest, BackgroundTasks } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from './bash-tool.js';
import { InMemorySandboxClient } from './sandbox/in-memory-sandbox-client.js';
import { ToolSessionState } from './session-state.js';
import { tempDir, text, toolContext } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => cleanup());

/** A background runtime that records what it was handed and starts nothing. */
function recordingBackground(): BackgroundTasks & { requests: BackgroundProcessRequest[] } {
  const requests: BackgroundProcessRequest[] = [];
  return { requests, spawn: async (request) => (requests.push(request), { id: 'bg-1' }) };
}

describe('Bash run_in_background with a sandbox', () => {
  it('refuses instead of handing the command to the host background runtime', async () => {
    const client = new InMemorySandboxClient();
    const tasks = recordingBackground();
    const tool = bashTool({ state: new ToolSessionState(), sandbox: { client }, backgroundTasks: tasks });
    const result = await tool.execute({ command: 'rm -rf ~/important', run_in_background: true }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'unavailable' });
    expect(text(result)).toContain('not supported inside the sandbox');
    expect(text(result)).toContain('foreground');
    expect(tasks.requests).toEqual([]);
    expect(client.commands).toEqual([]);
  });

  it('refuses the same way when the runtime is supplied lazily', async () => {
    const tasks = recordingBackground();
    const tool = bashTool({ state: new ToolSessionState(), sandbox: { client: new InMemorySandboxClient() }, backgroundTasks: () => tasks });
    const result = await tool.execute({ command: 'sleep 100', run_in_background: true }, toolContext(dir));
    expect(result.errorCode).toBe('unavailable');
    expect(tasks.requests).toEqual([]);
  });

  it('does not advertise run_in_background in the sandboxed tool description', () => {
    const sandboxed = bashTool({ sandbox: { client: new InMemorySandboxClient() } });
    expect(sandboxed.description).toContain('run_in_background is not available');
    expect(bashTool().description).toContain('Use run_in_background');
  });
});

describe('Bash remembered working directory', () => {
  it('says so when the directory an earlier cd went to has vanished', async () => {
    const gone = join(dir, 'gone');
    await mkdir(gone);
    const tool = bashTool({ state: new ToolSessionState() });
    await tool.execute({ command: 'cd gone' }, toolContext(dir));
    await rm(gone, { recursive: true });
    const result = await tool.execute({ command: 'pwd' }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(result.data?.stdout).toBe(`${dir}\n`);
    expect(text(result)).toBe(`${dir}\nShell cwd was reset to ${dir}: the previous working directory ${gone} no longer exists. The command ran in ${dir}.`);
    expect(result.data?.cwd).toBe(dir);
    const next = await tool.execute({ command: 'pwd' }, toolContext(dir));
    expect(text(next)).toBe(dir);
  });

  it('says so when the directory was replaced by a file', async () => {
    const replaced = join(dir, 'replaced');
    await mkdir(replaced);
    const tool = bashTool({ state: new ToolSessionState() });
    await tool.execute({ command: 'cd replaced' }, toolContext(dir));
    await rm(replaced, { recursive: true });
    await writeFile(replaced, 'now a file');
    const result = await tool.execute({ command: 'pwd' }, toolContext(dir));
    expect(text(result)).toContain(`${replaced} is no longer a directory. The command ran in ${dir}.`);
  });

  it('tells the background runtime caller where the command went instead', async () => {
    const gone = join(dir, 'gone');
    await mkdir(gone);
    const tasks = recordingBackground();
    const tool = bashTool({ state: new ToolSessionState(), backgroundTasks: tasks });
    await tool.execute({ command: 'cd gone' }, toolContext(dir));
    await rm(gone, { recursive: true });
    const result = await tool.execute({ command: 'make watch', run_in_background: true }, toolContext(dir));
    expect(tasks.requests[0]?.cwd).toBe(dir);
    expect(text(result)).toContain(`${gone} no longer exists. The command ran in ${dir}.`);
  });
});

describe('Bash positional parameters', () => {
  it('gives the command no positional parameters, as bash -c does', async () => {
    const tool = bashTool({ state: new ToolSessionState() });
    const result = await tool.execute({ command: 'echo "[$1] [$#] [$@] [$*]"' }, toolContext(dir));
    expect(text(result)).toBe('[] [0] [] []');
  });

  it('keeps the wrapper variable holding the command away from child processes', async () => {
    const tool = bashTool({ state: new ToolSessionState() });
    const result = await tool.execute({ command: 'sh -c \'echo "[${__tessera_cmd-unset}]"\'' }, toolContext(dir));
    expect(text(result)).toBe('[unset]');
  });

  it('echoes a syntax error without wrapper text', async () => {
    const tool = bashTool({ state: new ToolSessionState() });
    const result = await tool.execute({ command: 'if then' }, toolContext(dir));
    expect(result.errorCode).toBe('exit_code');
    expect(text(result)).not.toContain('__tessera');
  });

  it.runIf(existsSync('/bin/bash'))('names $0 after the shell', async () => {
    const tool = bashTool({ state: new ToolSessionState(), shell: '/bin/bash' });
    expect(text(await tool.execute({ command: 'echo "$0"' }, toolContext(dir)))).toBe('bash');
  });

  it('still carries a cd over and reports exit codes and line numbers', async () => {
    await mkdir(join(dir, 'sub'));
    const tool = bashTool({ state: new ToolSessionState() });
    const first = await tool.execute({ command: 'cd sub; set -- a b; echo "$#"; (exit 4)' }, toolContext(dir));
    expect(first).toMatchObject({ success: false, errorCode: 'exit_code', data: { exitCode: 4, cwd: join(dir, 'sub') } });
    expect(text(first)).toBe('2\nExit code: 4');
    const second = await tool.execute({ command: 'pwd; echo "$LINENO"; false' }, toolContext(dir));
    expect(text(second)).toBe(`${join(dir, 'sub')}\n1\nExit code: 1`);
    const exited = await tool.execute({ command: 'exit 7' }, toolContext(dir));
    expect(exited.data).toMatchObject({ exitCode: 7, cwd: join(dir, 'sub') });
  });
});

describe('Bash in a sandbox whose remembered directory is gone', () => {
  it('starts over at the sandbox root and says so', async () => {
    const client = new InMemorySandboxClient();
    await client.mkdir('/workspace');
    const state = new ToolSessionState();
    state.get('session-1').cwd = '/workspace/gone';
    const tool = bashTool({ state, sandbox: { client } });
    const result = await tool.execute({ command: 'pwd' }, toolContext('/host'));
    expect(client.commands.at(-1)!.options.cwd).toBe('/workspace');
    expect(text(result)).toContain('Shell cwd was reset to /workspace: the previous working directory /workspace/gone no longer exists in the sandbox.');
    // The next call is clean.
    const next = await tool.execute({ command: 'pwd' }, toolContext('/host'));
    expect(text(next)).not.toContain('was reset');
  });
});
