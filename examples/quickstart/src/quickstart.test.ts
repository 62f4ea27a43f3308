import { mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeWorkspace, runQuickstart } from './quickstart.js';
import { workspaceTools } from './workspace-tools.js';

describe('quickstart', () => {
  it('lists, reads, writes and checks SUMMARY.md from the real files', async () => {
    const workspace = await makeWorkspace();
    await writeFile(join(workspace, 'extra.md'), '# Extra\none two three\n');
    let printed = '';
    const { answer } = await runQuickstart({ workspace, write: (text) => (printed += text) });
    const summary = await readFile(join(workspace, 'SUMMARY.md'), 'utf8');
    expect(summary).toBe('# Summary\n\n- Bugs (5 words)\n- Extra (3 words)\n- Ideas (10 words)\n- Standup (7 words)\n');
    expect(answer).toContain('Done: SUMMARY.md lists 4 notes.');
    expect(printed).toContain('→ write_file(');
    expect(printed).not.toContain('✗');
  });

  it('keeps the file tools inside the workspace', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'tessera-qs-'));
    await symlink('/etc', join(workspace, 'escape'));
    const [, read] = workspaceTools(workspace);
    const context = { signal: new AbortController().signal, cwd: workspace, toolCallId: 't', sessionId: 's' };
    await expect(read!.execute({ file_path: '../../etc/hostname' } as never, context)).rejects.toThrow(/outside the workspace/);
    await expect(read!.execute({ file_path: 'escape/hostname' } as never, context)).rejects.toThrow(/outside the workspace/);
  });
});
