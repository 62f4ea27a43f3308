import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../bash-tool.js';
import { editTool } from '../edit-tool.js';
import { readTool } from '../read-tool.js';
import { ToolSessionState } from '../session-state.js';
import { tempDir, text, toolContext } from '../test-support.js';
import { writeTool } from '../write-tool.js';
import { InMemorySandboxClient } from './in-memory-sandbox-client.js';
import { applyWorkspaceManifest, validateWorkspaceManifest, WorkspaceManifestError } from './workspace-manifest.js';

let host: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir: host, cleanup } = await tempDir()));
afterEach(async () => cleanup());

describe('sandbox-aware tools', () => {
  it('route Read, Write and Edit through the client and never touch the host', async () => {
    const client = new InMemorySandboxClient({ files: { '/workspace/app.ts': 'const a = 1;\n' } });
    const options = { state: new ToolSessionState(), sandbox: { client } };
    const context = toolContext(host);
    const read = await readTool(options).execute({ file_path: '/workspace/app.ts' }, context);
    expect(text(read)).toBe('     1\tconst a = 1;');
    const edit = await editTool(options).execute({ file_path: '/workspace/app.ts', old_string: '1', new_string: '2' }, context);
    expect(edit.data?.startLine).toBe(1);
    const write = await writeTool(options).execute({ file_path: '/workspace/new/b.ts', content: 'b' }, context);
    expect(write.success).toBe(true);
    expect(new TextDecoder().decode(await client.readFile('/workspace/app.ts'))).toBe('const a = 2;\n');
    expect(client.listFiles()).toEqual(['/workspace/app.ts', '/workspace/new/b.ts']);
  });

  it('keep stale-edit protection and containment inside the sandbox', async () => {
    const client = new InMemorySandboxClient({ files: { '/workspace/x.txt': 'one', '/etc/passwd': 'root' } });
    const options = { state: new ToolSessionState(), sandbox: { client } };
    const context = toolContext(host);
    expect((await editTool(options).execute({ file_path: '/workspace/x.txt', old_string: 'one', new_string: 'two' }, context)).errorCode).toBe('not_read');
    await readTool(options).execute({ file_path: '/workspace/x.txt' }, context);
    await client.writeFile('/workspace/x.txt', 'changed');
    expect((await editTool(options).execute({ file_path: '/workspace/x.txt', old_string: 'changed', new_string: 'two' }, context)).errorCode).toBe('stale_read');
    for (const path of ['/etc/passwd', '/workspace/../etc/passwd', 'x.txt']) {
      const result = await readTool(options).execute({ file_path: path }, context);
      expect(result.success).toBe(false);
      expect(['outside_workspace', 'invalid_path']).toContain(result.errorCode);
    }
  });

  it('run Bash in the sandbox, carrying the reported cwd over', async () => {
    const client = new InMemorySandboxClient({ files: { '/workspace/src/a.txt': 'A' } });
    const tool = bashTool({ state: new ToolSessionState(), sandbox: { client } });
    await tool.execute({ command: 'cd src' }, toolContext(host));
    const cat = await tool.execute({ command: 'cat a.txt', timeout: 5000 }, toolContext(host));
    expect(text(cat)).toBe('A');
    expect(client.commands[1]).toMatchObject({ command: 'cat a.txt', options: { cwd: '/workspace/src', timeoutMs: 5000 } });
    const missing = await tool.execute({ command: 'ls' }, toolContext(host));
    expect(missing).toMatchObject({ success: false, errorCode: 'exit_code', data: { exitCode: 127 } });
  });
});

describe('InMemorySandboxClient', () => {
  it('snapshots and restores the workspace', async () => {
    const client = new InMemorySandboxClient();
    await client.writeFile('/w/a', 'one');
    const id = await client.snapshot();
    await client.writeFile('/w/a', 'two');
    await client.writeFile('/w/b', 'new');
    await client.restore(id);
    expect(client.listFiles()).toEqual(['/w/a']);
    expect(new TextDecoder().decode(await client.readFile('/w/a'))).toBe('one');
    await expect(client.restore('nope')).rejects.toThrow('Unknown sandbox snapshot');
    await expect(client.readFile('relative')).rejects.toThrow('absolute');
  });
});

describe('applyWorkspaceManifest', () => {
  it('writes inline files, directories and host copies under the root', async () => {
    await mkdir(join(host, 'proj', 'lib'), { recursive: true });
    await writeFile(join(host, 'proj', 'lib', 'x.js'), 'x');
    await writeFile(join(host, 'README.md'), 'readme');
    await symlink('/etc/passwd', join(host, 'proj', 'lib', 'leak'));
    const client = new InMemorySandboxClient();
    const result = await applyWorkspaceManifest(
      client,
      {
        root: '/sandbox/ws',
        entries: [
          { type: 'file', path: 'notes/todo.md', content: '- [ ] ship' },
          { type: 'directory', path: 'out' },
          { type: 'localFile', path: 'README.md', source: 'README.md' },
          { type: 'localDir', path: 'vendor', source: 'proj' },
        ],
      },
      { hostRoot: host },
    );
    expect(client.listFiles()).toEqual(['/sandbox/ws/README.md', '/sandbox/ws/notes/todo.md', '/sandbox/ws/vendor/lib/x.js']);
    expect(result.directories).toContain('/sandbox/ws/out');
    expect(await client.stat('/sandbox/ws/out')).toMatchObject({ isDirectory: true });
  });

  it('validates every path before writing anything', async () => {
    const client = new InMemorySandboxClient();
    const manifest = {
      root: 'relative-root',
      entries: [
        { type: 'file' as const, path: '../escape', content: 'x' },
        { type: 'file' as const, path: '/abs', content: 'x' },
        { type: 'localFile' as const, path: 'ok', source: '../../etc/passwd' },
        { type: 'directory' as const, path: 'a/b' },
        { type: 'directory' as const, path: 'a/./b' },
      ],
    };
    const problems = validateWorkspaceManifest(manifest, 'manifest.json');
    expect(problems.map((problem) => problem.path)).toEqual(['root', 'entries[0].path', 'entries[1].path', 'entries[2].source', 'entries[4].path']);
    expect(problems[0]).toMatchObject({ severity: 'error', file: 'manifest.json' });
    await expect(applyWorkspaceManifest(client, manifest, { hostRoot: host })).rejects.toBeInstanceOf(WorkspaceManifestError);
    expect(client.listFiles()).toEqual([]);
  });

  it('refuses host sources that resolve outside the host root through a symlink', async () => {
    await symlink('/etc', join(host, 'etc-link'));
    const client = new InMemorySandboxClient();
    const error = await applyWorkspaceManifest(client, { entries: [{ type: 'localDir', path: 'etc', source: 'etc-link' }] }, { hostRoot: host }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkspaceManifestError);
    expect((error as WorkspaceManifestError).message).toContain('outside the host root');
    expect(client.listFiles()).toEqual([]);
  });

  it('checks the kind of every host source before writing anything, and reports all of them', async () => {
    await mkdir(join(host, 'a-dir'), { recursive: true });
    await writeFile(join(host, 'a-file.txt'), 'x');
    const client = new InMemorySandboxClient();
    const error = await applyWorkspaceManifest(
      client,
      {
        entries: [
          { type: 'file', path: 'ok.txt', content: 'written only if all is well' },
          { type: 'localFile', path: 'f', source: 'a-dir' },
          { type: 'localDir', path: 'd', source: 'a-file.txt' },
          { type: 'localFile', path: 'm', source: 'missing.txt' },
        ],
      },
      { hostRoot: host },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkspaceManifestError);
    const diagnostics = (error as WorkspaceManifestError).diagnostics;
    expect(diagnostics.map((entry) => entry.path)).toEqual(['entries[1].source', 'entries[2].source', 'entries[3].source']);
    expect(diagnostics[0]!.message).toContain('use localDir');
    expect(diagnostics[1]!.message).toContain('use localFile');
    expect(client.listFiles()).toEqual([]);
  });
});
