import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EditCheckpoints, SubagentLauncher } from '@tessera/contracts';
import type { Kernel } from '@tessera/kernel';
import { editCheckpoints } from '@tessera/plugin-checkpoints';
import { subagents } from '@tessera/plugin-subagents';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kernelWith, tempWorkspace } from '../../plugins/checkpoints/src/checkpoints.test-helper.js';

// Edit checkpoints and subagents together: a subagent started during a checkpointed turn, in the
// same folder, edits on the turn's behalf, so restoring the turn undoes its edits too.

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

const writeBy = (path: string) => [{ toolCalls: [{ name: 'Write', input: { file_path: path, content: 'child\n' } }] }, { text: 'child done' }];

describe('edit checkpoints: edits of a subagent', () => {
  it("a subagent working in the session's folder is captured in the parent's open turn, and restoring the turn undoes it", async () => {
    kernel = await kernelWith(writeBy(join(dir, 'by-child.txt')), [editCheckpoints(), subagents({ cwd: dir, home: dir, discover: false, worktree: false })]);
    const session = kernel.createSession({ cwd: dir });
    const checkpoints = session.services.get(EditCheckpoints);
    const turn = await checkpoints.beginTurn(session, 'delegate');
    // What the parent's agent command does during its turn.
    await kernel.get(SubagentLauncher).launch({ prompt: 'write it', parentSessionId: session.sessionId, cwd: dir, signal: new AbortController().signal });
    await checkpoints.finalizeTurn(session.sessionId);
    expect(existsSync(join(dir, 'by-child.txt'))).toBe(true);
    expect((await checkpoints.inspect(session.sessionId, turn.id)).files.map((file) => file.path)).toEqual([join(dir, 'by-child.txt')]);
    await checkpoints.restore(session.sessionId, turn.id);
    expect(existsSync(join(dir, 'by-child.txt'))).toBe(false);
  });

  it('a subagent given the folder through a link to it still edits on the turn’s behalf', async () => {
    const { symlink } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const link = join(tmpdir(), `tessera-checkpoint-link-${process.pid}-${Date.now()}`);
    await symlink(dir, link);
    try {
      kernel = await kernelWith(writeBy(join(dir, 'by-child.txt')), [editCheckpoints(), subagents({ cwd: dir, home: dir, discover: false, worktree: false })]);
      const session = kernel.createSession({ cwd: dir });
      const checkpoints = session.services.get(EditCheckpoints);
      const turn = await checkpoints.beginTurn(session, 'delegate');
      await kernel.get(SubagentLauncher).launch({ prompt: 'write it', parentSessionId: session.sessionId, cwd: link, signal: new AbortController().signal });
      await checkpoints.finalizeTurn(session.sessionId);
      expect((await checkpoints.inspect(session.sessionId, turn.id)).files.map((file) => file.path)).toEqual([join(dir, 'by-child.txt')]);
    } finally {
      const { rm } = await import('node:fs/promises');
      await rm(link, { force: true });
    }
  });

  it('a subagent working in another folder (as one in a worktree of its own does) is not the turn’s', async () => {
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    kernel = await kernelWith(writeBy(join(elsewhere, 'by-child.txt')), [editCheckpoints(), subagents({ cwd: dir, home: dir, discover: false, worktree: false })]);
    const session = kernel.createSession({ cwd: dir });
    const checkpoints = session.services.get(EditCheckpoints);
    const turn = await checkpoints.beginTurn(session, 'delegate');
    await kernel.get(SubagentLauncher).launch({ prompt: 'write it', parentSessionId: session.sessionId, cwd: elsewhere, signal: new AbortController().signal });
    await checkpoints.finalizeTurn(session.sessionId);
    expect(existsSync(join(elsewhere, 'by-child.txt'))).toBe(true);
    expect((await checkpoints.inspect(session.sessionId, turn.id)).files).toEqual([]);
  });
});
