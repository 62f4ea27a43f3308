import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EditCheckpoints, SandboxPaths, systemClock, type Tool } from '@tessera/contracts';
import { createKernel, definePlugin, PluginOptionsError, toolsPlugin, type Kernel } from '@tessera/kernel';
import type { ScriptedTurn } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { kernelWith, resultText, tempWorkspace, toolResults, toolTurn } from './checkpoints.test-helper.js';
import { editCheckpoints } from './edit-checkpoints-plugin.js';
import { FileEditCheckpoints } from './file-edit-checkpoints.js';

let dir: string;
let cleanup: () => Promise<void>;
let kernel: Kernel | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempWorkspace());
});

afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await cleanup();
});

/** A kernel session with edit checkpoints, and a helper that runs one prompt as a checkpointed turn. */
async function checkpointedSession(turns: ScriptedTurn[], plugins: Parameters<typeof kernelWith>[1] = []) {
  kernel = await kernelWith(turns, [editCheckpoints(), ...plugins]);
  const session = kernel.createSession({ cwd: dir });
  const checkpoints = session.services.get(EditCheckpoints);
  const prompt = async (text: string) => {
    const summary = await checkpoints.beginTurn(session, text);
    try {
      await session.run(text);
    } finally {
      await checkpoints.finalizeTurn(session.sessionId);
    }
    return summary;
  };
  return { session, checkpoints, prompt };
}

const file = (name: string) => join(dir, name);
const read = (name: string) => readFile(file(name), 'utf8');

describe('editCheckpoints: turns, capture and restore', () => {
  it('restores over three turns: edited files go back, created files are deleted, later checkpoints removed', async () => {
    await writeFile(file('a.txt'), 'one\n');
    const { session, checkpoints, prompt } = await checkpointedSession([
      // Turn 1 edits a.txt: one → two.
      ...toolTurn({ name: 'Read', input: { file_path: file('a.txt') } }, { name: 'Edit', input: { file_path: file('a.txt'), old_string: 'one', new_string: 'two' } }),
      // Turn 2 creates b.txt (in a new directory) and does nothing else.
      ...toolTurn({ name: 'Write', input: { file_path: file('new/dir/b.txt'), content: 'bee\n' } }),
      // Turn 3 edits a.txt again: two → three.
      ...toolTurn({ name: 'Edit', input: { file_path: file('a.txt'), old_string: 'two', new_string: 'three' } }),
    ]);
    const first = await prompt('change a to two');
    const second = await prompt('create b\nwith a second line');
    const third = await prompt('change a to three');
    expect(toolResults(session.getHistory()).map((block) => block.isError)).toEqual([false, false, false, false]);
    expect(await read('a.txt')).toBe('three\n');
    expect(await read('new/dir/b.txt')).toBe('bee\n');

    expect([first.sequence, second.sequence, third.sequence]).toEqual([1, 2, 3]);
    expect(first.id).toMatch(/^0001-[0-9a-f]{8}$/);
    const listed = await checkpoints.list(session.sessionId);
    expect(listed.map((summary) => [summary.id, summary.prompt, summary.fileCount, typeof summary.finalizedAt])).toEqual([
      [first.id, 'change a to two', 1, 'string'],
      [second.id, 'create b', 1, 'string'],
      [third.id, 'change a to three', 1, 'string'],
    ]);

    const inspection = await checkpoints.inspect(session.sessionId, second.id);
    expect(inspection.files).toEqual([{ path: file('new/dir/b.txt'), displayPath: join('new', 'dir', 'b.txt'), existed: false, snapshotAvailable: true }]);
    expect(inspection.rollback).toEqual([third.id, second.id]);
    expect(inspection.kept).toEqual([first.id]);
    expect((await checkpoints.inspect(session.sessionId, third.id)).files).toEqual([
      { path: file('a.txt'), displayPath: 'a.txt', existed: true, snapshotAvailable: true, bytes: 4 },
    ]);

    // Back to before turn 2 = after turn 1: a.txt says "two", b.txt and the directories made for it are gone.
    const result = await checkpoints.restore(session.sessionId, second.id);
    expect(result).toEqual({
      checkpointId: second.id,
      restoredFiles: [file('a.txt')],
      deletedFiles: [file('new/dir/b.txt')],
      removedCheckpoints: [third.id, second.id],
    });
    expect(await read('a.txt')).toBe('two\n');
    expect(existsSync(file('new'))).toBe(false);
    expect((await checkpoints.list(session.sessionId)).map((summary) => summary.id)).toEqual([first.id]);
    expect(await readdir(join(dir, '.tessera', 'checkpoints', session.sessionId))).toEqual([first.id]);
    // What a restore that stopped while deleting leaves (a directory renamed out of the list, half removed): skipped.
    const leftover = join(dir, '.tessera', 'checkpoints', session.sessionId, `.removed-${third.id}.0badf00d`);
    await mkdir(join(leftover, 'files'), { recursive: true });
    expect((await checkpoints.list(session.sessionId)).map((summary) => summary.id)).toEqual([first.id]);

    // And back to before turn 1; the restore also sweeps what the stopped one left.
    await checkpoints.restore(session.sessionId, first.id);
    expect(await read('a.txt')).toBe('one\n');
    expect(await checkpoints.list(session.sessionId)).toEqual([]);
    expect(existsSync(leftover)).toBe(false);
  });

  it('writes the manifest when the turn begins and finalises a turn that changed nothing', async () => {
    const { session, checkpoints, prompt } = await checkpointedSession([{ text: 'Nothing to do.' }]);
    const summary = await prompt('just talk');
    const manifestFile = join(dir, '.tessera', 'checkpoints', session.sessionId, summary.id, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
    expect(manifest).toMatchObject({ version: 1, id: summary.id, sessionId: session.sessionId, sequence: 1, files: [] });
    expect(typeof manifest.finalizedAt).toBe('string');
    expect(summary.finalizedAt).toBeUndefined();
    expect((await checkpoints.list(session.sessionId))[0]).toMatchObject({ id: summary.id, fileCount: 0 });
  });

  it('discardTurn removes a turn that changed nothing, and finalises one that captured a file instead', async () => {
    const { session, checkpoints } = await checkpointedSession(toolTurn({ name: 'Write', input: { file_path: file('b.txt'), content: 'two\n' } }));
    const empty = await checkpoints.beginTurn(session, 'blocked prompt');
    expect(await checkpoints.discardTurn!(session.sessionId)).toBe(true);
    expect(existsSync(join(dir, '.tessera', 'checkpoints', session.sessionId, empty.id))).toBe(false);
    expect(await checkpoints.list(session.sessionId)).toEqual([]);
    expect(await checkpoints.discardTurn!(session.sessionId)).toBe(false);

    const edited = await checkpoints.beginTurn(session, 'write it');
    await session.run('write it');
    expect(await checkpoints.discardTurn!(session.sessionId)).toBe(false);
    expect(await checkpoints.list(session.sessionId)).toEqual([expect.objectContaining({ id: edited.id, fileCount: 1, finalizedAt: expect.any(String) })]);
    expect(await read('b.txt')).toBe('two\n');
  });

  it('captures a file once per turn: repeated edits keep the first pre-image', async () => {
    await writeFile(file('a.txt'), 'alpha\n');
    const { session, checkpoints, prompt } = await checkpointedSession(
      toolTurn(
        { name: 'Read', input: { file_path: file('a.txt') } },
        { name: 'Edit', input: { file_path: file('a.txt'), old_string: 'alpha', new_string: 'beta' } },
        { name: 'Edit', input: { file_path: file('a.txt'), old_string: 'beta', new_string: 'gamma' } },
        { name: 'Write', input: { file_path: file('a.txt'), content: 'delta\n' } },
      ),
    );
    const turn = await prompt('edit a lot');
    expect(toolResults(session.getHistory()).every((block) => !block.isError)).toBe(true);
    expect(await read('a.txt')).toBe('delta\n');
    const inspection = await checkpoints.inspect(session.sessionId, turn.id);
    expect(inspection.files).toHaveLength(1);
    expect(await readdir(join(dir, '.tessera', 'checkpoints', session.sessionId, turn.id, 'files'))).toHaveLength(1);
    await checkpoints.restore(session.sessionId, turn.id);
    expect(await read('a.txt')).toBe('alpha\n');
  });

  it('round-trips a large binary file changed by a declared edit-family tool (relative path)', async () => {
    const original = randomBytes(5 * 1024 * 1024);
    original[0] = 0;
    original[1] = 0xff;
    await writeFile(file('blob.bin'), original);
    const scramble: Tool<{ target: string }> = {
      name: 'scramble',
      description: 'Overwrites a file with random bytes.',
      parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
      permission: { family: 'edit', subject: 'target' },
      async execute(input, context) {
        await writeFile(join(context.cwd, input.target), randomBytes(1024));
        return { success: true, output: 'scrambled' };
      },
    };
    const { session, checkpoints, prompt } = await checkpointedSession(toolTurn({ name: 'scramble', input: { target: 'blob.bin' } }), [toolsPlugin(scramble as Tool)]);
    const turn = await prompt('scramble the blob');
    expect((await readFile(file('blob.bin'))).length).toBe(1024);
    expect((await checkpoints.inspect(session.sessionId, turn.id)).files).toEqual([
      { path: file('blob.bin'), displayPath: 'blob.bin', existed: true, snapshotAvailable: true, bytes: original.length },
    ]);
    await checkpoints.restore(session.sessionId, turn.id);
    expect((await readFile(file('blob.bin'))).equals(original)).toBe(true);
  });

  it('denies the call before the file changes when the pre-image cannot be saved', async () => {
    await writeFile(file('a.txt'), 'keep me\n');
    kernel = await kernelWith(
      toolTurn({ name: 'Read', input: { file_path: file('a.txt') } }, { name: 'Write', input: { file_path: file('a.txt'), content: 'lost\n' } }),
      [editCheckpoints()],
    );
    const session = kernel.createSession({ cwd: dir });
    const checkpoints = session.services.get(EditCheckpoints);
    const turn = await checkpoints.beginTurn(session, 'overwrite a');
    // A plain file where the snapshot directory must go: the copy fails (even for root, unlike chmod).
    await writeFile(join(dir, '.tessera', 'checkpoints', session.sessionId, turn.id, 'files'), 'in the way');
    await session.run('overwrite a');
    await checkpoints.finalizeTurn(session.sessionId);
    const [, write] = toolResults(session.getHistory());
    expect(write?.isError).toBe(true);
    expect(resultText(write)).toContain(`edit checkpoints could not save ${file('a.txt')} before Write changes it`);
    expect(await read('a.txt')).toBe('keep me\n');
    expect((await checkpoints.inspect(session.sessionId, turn.id)).files).toEqual([]);
  });

  it('denies the call before the file changes when the capture journal cannot be written (an edit and a new file)', async () => {
    await writeFile(file('a.txt'), 'keep me\n');
    kernel = await kernelWith(
      toolTurn(
        { name: 'Read', input: { file_path: file('a.txt') } },
        { name: 'Write', input: { file_path: file('a.txt'), content: 'lost\n' } },
        { name: 'Write', input: { file_path: file('new.txt'), content: 'never\n' } },
      ),
      [editCheckpoints()],
    );
    const session = kernel.createSession({ cwd: dir });
    const checkpoints = session.services.get(EditCheckpoints);
    const turn = await checkpoints.beginTurn(session, 'write two');
    // A directory where the journal file must go: opening it for appending fails.
    await mkdir(join(dir, '.tessera', 'checkpoints', session.sessionId, turn.id, 'captures.jsonl'), { recursive: true });
    await session.run('write two');
    const [, edit, created] = toolResults(session.getHistory());
    expect(edit?.isError).toBe(true);
    expect(resultText(edit)).toContain(`edit checkpoints could not save ${file('a.txt')} before Write changes it`);
    expect(created?.isError).toBe(true);
    expect(await read('a.txt')).toBe('keep me\n');
    expect(existsSync(file('new.txt'))).toBe(false);
  });

  it('captures nothing for a session with no open turn', async () => {
    kernel = await kernelWith(toolTurn({ name: 'Write', input: { file_path: file('c.txt'), content: 'c\n' } }), [editCheckpoints()]);
    const session = kernel.createSession({ cwd: dir });
    await session.run('write c');
    expect(await read('c.txt')).toBe('c\n');
    expect(await session.services.get(EditCheckpoints).list(session.sessionId)).toEqual([]);
    expect(existsSync(join(dir, '.tessera'))).toBe(false);
  });

  it('rejects a restore while a turn is open', async () => {
    const { session, checkpoints } = await checkpointedSession([{ text: 'ok' }]);
    const turn = await checkpoints.beginTurn(session, 'running');
    await expect(checkpoints.restore(session.sessionId, turn.id)).rejects.toMatchObject({ code: 'checkpoint_restore_busy', recoverable: true });
    await checkpoints.finalizeTurn(session.sessionId);
    await expect(checkpoints.restore(session.sessionId, turn.id)).resolves.toMatchObject({ removedCheckpoints: [turn.id] });
  });

  it('rejects invalid session ids and checkpoint ids before touching a path, and names unknown ids', async () => {
    const { session, checkpoints } = await checkpointedSession([]);
    await expect(checkpoints.beginTurn({ sessionId: '../escape', cwd: dir }, 'x')).rejects.toMatchObject({ code: 'invalid_session_id' });
    await expect(checkpoints.list('a/b')).rejects.toMatchObject({ code: 'invalid_session_id' });
    for (const id of ['../0001-deadbeef', '0001-DEADBEEF', '1-deadbeef', '', 'manifest.json']) {
      await expect(checkpoints.restore(session.sessionId, id)).rejects.toMatchObject({ code: 'invalid_checkpoint_id' });
      await expect(checkpoints.inspect(session.sessionId, id)).rejects.toMatchObject({ code: 'invalid_checkpoint_id' });
    }
    const error = await checkpoints.inspect(session.sessionId, '0042-deadbeef').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'checkpoint_not_found' });
    expect((error as Error).message).toContain('0042-deadbeef');
    await expect(checkpoints.list('never-seen')).rejects.toMatchObject({ code: 'checkpoint_session_unknown' });
  });

  it('rejects a manifest edited to point a snapshot outside its directory', async () => {
    await writeFile(file('a.txt'), 'a\n');
    const { session, checkpoints, prompt } = await checkpointedSession(
      toolTurn({ name: 'Read', input: { file_path: file('a.txt') } }, { name: 'Write', input: { file_path: file('a.txt'), content: 'b\n' } }),
    );
    const turn = await prompt('change a');
    const manifestFile = join(dir, '.tessera', 'checkpoints', session.sessionId, turn.id, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
    manifest.files[0].snapshot = '../../../../etc/passwd';
    await writeFile(manifestFile, JSON.stringify(manifest));
    await expect(checkpoints.restore(session.sessionId, turn.id)).rejects.toMatchObject({ code: 'checkpoint_manifest_invalid' });
    expect(await read('a.txt')).toBe('b\n');
  });

  it('refuses a manifest edited to name files outside the workspace (a planted later checkpoint too): nothing is written or deleted', async () => {
    const outside = await tempWorkspace();
    try {
      const victim = join(outside.dir, 'victim.txt');
      const doomed = join(outside.dir, 'doomed.txt');
      await writeFile(victim, 'precious\n');
      await writeFile(doomed, 'keep me\n');
      await writeFile(file('a.txt'), 'a\n');
      const { session, checkpoints, prompt } = await checkpointedSession([
        ...toolTurn({ name: 'Read', input: { file_path: file('a.txt') } }, { name: 'Write', input: { file_path: file('a.txt'), content: 'b\n' } }),
        ...toolTurn({ name: 'Write', input: { file_path: file('c.txt'), content: 'c\n' } }),
      ]);
      const first = await prompt('change a');
      const second = await prompt('create c');
      // What a program that can write the project's .tessera/ could plant in the later checkpoint.
      const manifestFile = join(dir, '.tessera', 'checkpoints', session.sessionId, second.id, 'manifest.json');
      const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
      manifest.files.push({ path: victim, existed: true, snapshot: '0001' }, { path: doomed, existed: false });
      await mkdir(join(dir, '.tessera', 'checkpoints', session.sessionId, second.id, 'files'), { recursive: true });
      await writeFile(join(dir, '.tessera', 'checkpoints', session.sessionId, second.id, 'files', '0001'), 'overwritten\n');
      await writeFile(manifestFile, JSON.stringify(manifest));
      await expect(checkpoints.restore(session.sessionId, first.id)).rejects.toMatchObject({ code: 'checkpoint_outside_workspace', details: { path: victim } });
      expect(await readFile(victim, 'utf8')).toBe('precious\n');
      expect(await readFile(doomed, 'utf8')).toBe('keep me\n');
      // Nothing inside was touched either: the refusal comes before the first file.
      expect(await read('a.txt')).toBe('b\n');
      expect(await read('c.txt')).toBe('c\n');
    } finally {
      await outside.cleanup();
    }
  });

  it('refuses a manifest path that climbs out through a link in the workspace ("link/../x"), and one that goes through the link: nothing outside is touched', async () => {
    const outside = await tempWorkspace();
    try {
      // A folder in the workspace that is a link to one outside (node_modules/<pkg> under pnpm, a vendor link).
      await mkdir(join(outside.dir, 'pkg'));
      await symlink(join(outside.dir, 'pkg'), file('link'));
      const victim = join(outside.dir, 'victim.txt');
      const doomed = join(outside.dir, 'doomed.txt');
      const inPackage = join(outside.dir, 'pkg', 'index.js');
      await writeFile(victim, 'precious\n');
      await writeFile(doomed, 'keep me\n');
      await writeFile(inPackage, 'package\n');
      const { session, checkpoints, prompt } = await checkpointedSession(toolTurn({ name: 'Write', input: { file_path: file('c.txt'), content: 'c\n' } }));
      const turn = await prompt('create c');
      const turnDir = join(dir, '.tessera', 'checkpoints', session.sessionId, turn.id);
      const original = await readFile(join(turnDir, 'manifest.json'), 'utf8');
      await mkdir(join(turnDir, 'files'), { recursive: true });
      await writeFile(join(turnDir, 'files', '0001'), 'overwritten\n');
      const plant = async (...files: object[]): Promise<void> => {
        const manifest = JSON.parse(original);
        manifest.files.push(...files);
        await writeFile(join(turnDir, 'manifest.json'), JSON.stringify(manifest));
      };
      // Read as /ws/victim.txt it would pass a lexical check; the system resolves link/.. to the outside folder.
      await plant({ path: `${file('link')}/../victim.txt`, existed: true, snapshot: '0001' }, { path: `${file('link')}/../doomed.txt`, existed: false });
      await expect(checkpoints.restore(session.sessionId, turn.id)).rejects.toMatchObject({ code: 'checkpoint_manifest_invalid', message: expect.stringContaining('not a normalised path') });
      // Through the link without a ".." step: the real path is outside.
      await plant({ path: join(file('link'), 'index.js'), existed: true, snapshot: '0001' });
      await expect(checkpoints.restore(session.sessionId, turn.id)).rejects.toMatchObject({ code: 'checkpoint_outside_workspace' });
      expect(await readFile(victim, 'utf8')).toBe('precious\n');
      expect(await readFile(doomed, 'utf8')).toBe('keep me\n');
      expect(await readFile(inPackage, 'utf8')).toBe('package\n');
      expect(await read('c.txt')).toBe('c\n');
    } finally {
      await outside.cleanup();
    }
  });

  it('a link that took a captured file\'s place is removed or replaced on restore, never followed to the file it points at', async () => {
    await writeFile(file('kept.txt'), 'kept\n');
    await writeFile(file('edited.txt'), 'original\n');
    const { session, checkpoints, prompt } = await checkpointedSession([
      ...toolTurn({ name: 'Write', input: { file_path: file('notes.md'), content: 'notes\n' } }, { name: 'Read', input: { file_path: file('edited.txt') } }, { name: 'Write', input: { file_path: file('edited.txt'), content: 'changed\n' } }),
    ]);
    const turn = await prompt('write notes, change edited');
    // Since then, both names became links to another file of the project.
    const { rm: remove } = await import('node:fs/promises');
    await remove(file('notes.md'));
    await remove(file('edited.txt'));
    await symlink(file('kept.txt'), file('notes.md'));
    await symlink(file('kept.txt'), file('edited.txt'));
    await checkpoints.restore(session.sessionId, turn.id);
    expect(await read('kept.txt')).toBe('kept\n');
    expect(existsSync(file('notes.md'))).toBe(false);
    expect(await read('edited.txt')).toBe('original\n');
    const { lstat: lstatOf } = await import('node:fs/promises');
    expect((await lstatOf(file('edited.txt'))).isSymbolicLink()).toBe(false);
  });

  it('restoring over two turns removes a folder the first created once the files both turns put in it are gone', async () => {
    const { checkpoints, prompt } = await checkpointedSession([
      ...toolTurn({ name: 'Write', input: { file_path: file('new/a.txt'), content: 'a\n' } }),
      ...toolTurn({ name: 'Read', input: { file_path: file('new/a.txt') } }, { name: 'Write', input: { file_path: file('new/a.txt'), content: 'a2\n' } }, { name: 'Write', input: { file_path: file('new/deeper/b.txt'), content: 'b\n' } }),
    ]);
    const first = await prompt('create new/a.txt');
    await prompt('edit a, create new/deeper/b.txt');
    expect(await read('new/deeper/b.txt')).toBe('b\n');
    const restored = await checkpoints.restore(first.sessionId, first.id);
    expect(restored.deletedFiles.sort()).toEqual([file('new/a.txt'), file('new/deeper/b.txt')].sort());
    expect(existsSync(file('new'))).toBe(false);
  });

  it('does not capture a file outside the workspace: no copy of it lands in the project', async () => {
    const outside = await tempWorkspace();
    try {
      const secret = join(outside.dir, 'id_rsa');
      await writeFile(secret, 'PRIVATE KEY\n');
      const { session, checkpoints, prompt } = await checkpointedSession(toolTurn({ name: 'Write', input: { file_path: secret, content: 'x' } }));
      const turn = await prompt('overwrite the key');
      expect((await checkpoints.list(session.sessionId)).at(-1)).toMatchObject({ id: turn.id, fileCount: 0 });
      // The Write itself is refused by the tool (outside the workspace), and no pre-image was kept.
      expect(await readFile(secret, 'utf8')).toBe('PRIVATE KEY\n');
      const files = join(dir, '.tessera', 'checkpoints', session.sessionId, turn.id, 'files');
      expect(existsSync(files) ? await readdir(files) : []).toEqual([]);
    } finally {
      await outside.cleanup();
    }
  });

  it('keeps checkpoints under root when one is given', async () => {
    const root = join(dir, 'store');
    kernel = await kernelWith([], [editCheckpoints({ root })]);
    const session = kernel.createSession({ cwd: dir });
    const checkpoints = session.services.get(EditCheckpoints);
    const turn = await checkpoints.beginTurn(session, 'hello');
    await checkpoints.finalizeTurn(session.sessionId);
    expect(existsSync(join(root, '.tessera', 'checkpoints', session.sessionId, turn.id, 'manifest.json'))).toBe(true);
    expect(existsSync(join(dir, '.tessera'))).toBe(false);
  });

  it('reads the capture journal of a turn that was never finalised (the process died mid-turn)', async () => {
    await writeFile(file('a.txt'), 'before\n');
    const first = new FileEditCheckpoints({ clock: systemClock });
    const turn = await first.beginTurn({ sessionId: 'crashed', cwd: dir }, 'edit a');
    await first.capture('crashed', file('a.txt'));
    await first.capture('crashed', file('made.txt'));
    await writeFile(file('a.txt'), 'after\n');
    await writeFile(file('made.txt'), 'new\n');
    // A torn last line (a write cut short) is skipped.
    await writeFile(join(dir, '.tessera', 'checkpoints', 'crashed', turn.id, 'captures.jsonl'), '{"path":', { flag: 'a' });

    const second = new FileEditCheckpoints({ root: dir, clock: systemClock });
    const [summary] = await second.list('crashed');
    expect(summary).toMatchObject({ id: turn.id, fileCount: 2 });
    expect(summary?.finalizedAt).toBeUndefined();
    const result = await second.restore('crashed', turn.id);
    expect(result).toMatchObject({ restoredFiles: [file('a.txt')], deletedFiles: [file('made.txt')] });
    expect(await read('a.txt')).toBe('before\n');
    expect(existsSync(file('made.txt'))).toBe(false);
    await first.close();
  });

  it('finalises the open turn when the session ends, and a stale turn when the next one begins', async () => {
    kernel = await kernelWith([], [editCheckpoints()]);
    const session = kernel.createSession({ cwd: dir });
    const checkpoints = session.services.get(EditCheckpoints);
    const stale = await checkpoints.beginTurn(session, 'never finalised');
    const next = await checkpoints.beginTurn(session, 'next');
    expect(next.sequence).toBe(2);
    await session.shutdown();
    const listed = await checkpoints.list(session.sessionId);
    expect(listed.map((summary) => [summary.id, typeof summary.finalizedAt])).toEqual([
      [stale.id, 'string'],
      [next.id, 'string'],
    ]);
  });

  it('does not capture host paths for sandboxed file tools', async () => {
    const sandbox = definePlugin({
      name: 'fake-sandbox-paths',
      provides: [SandboxPaths],
      register({ bind }) {
        bind(SandboxPaths).toConstantValue({ root: '/workspace' });
      },
    });
    const probe: Tool = { name: 'Write', description: 'x', parameters: { type: 'object' }, execute: () => ({ success: true, output: 'ok' }) };
    kernel = await createKernel({ plugins: [...testPreset({ turns: toolTurn({ name: 'Write', input: { file_path: '/workspace/a.txt', content: 'x' } }) }), toolsPlugin(probe), sandbox, editCheckpoints()] });
    const session = kernel.createSession({ cwd: dir });
    const checkpoints = session.services.get(EditCheckpoints);
    const turn = await checkpoints.beginTurn(session, 'sandboxed');
    await session.run('sandboxed');
    await checkpoints.finalizeTurn(session.sessionId);
    expect((await checkpoints.inspect(session.sessionId, turn.id)).files).toEqual([]);
  });

  it('checks its options in the factory', () => {
    expect(() => editCheckpoints({ root: '' })).toThrow(PluginOptionsError);
    expect(() => editCheckpoints({ clock: {} as never })).toThrow(/clock/);
  });
});
