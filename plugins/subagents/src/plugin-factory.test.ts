import { createKernel } from '@tessera/kernel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ioState } from '../../../test/support/io-guard.js';
import { subagents } from './subagents-plugin.js';

// A plugin factory only keeps and checks its options: with an empty environment it neither
// throws nor touches the file system or spawns anything, and composing its value into a kernel
// builds nothing (the manager, its runners and the worktree adapter come on first use; agent
// files are read at boot, and only when `discover` is on).

vi.mock('node:fs', (original) => import('../../../test/support/io-guard.js').then((guard) => guard.guardedModule('fs', original)));
vi.mock('node:fs/promises', (original) => import('../../../test/support/io-guard.js').then((guard) => guard.guardedModule('fs/promises', original)));
vi.mock('node:child_process', (original) => import('../../../test/support/io-guard.js').then((guard) => guard.guardedModule('child_process', original)));

const env = process.env;
afterEach(() => {
  process.env = env;
  ioState.forbidden = false;
  ioState.calls.length = 0;
  vi.restoreAllMocks();
});

describe('subagents() factory', () => {
  it('with an empty environment: does not throw, does no I/O, and composing (discover off) builds nothing', async () => {
    process.env = {};
    const cwd = vi.spyOn(process, 'cwd');
    ioState.forbidden = true;
    subagents();
    const plugin = subagents({ discover: false, worktree: false });
    const kernel = await createKernel({ plugins: [plugin] });
    expect(kernel.describe().plugins[0]).toMatchObject({
      name: 'subagents',
      requires: [],
      optional: ['Provider', 'Clock', 'ToolContribution', 'AgentDefinitionContribution', 'AgentDefinitionSource', 'AgentTaskManager', 'Diagnostics', 'ApprovalHandler'],
    });
    await kernel.shutdown();
    expect(ioState.calls).toEqual([]);
    expect(cwd).not.toHaveBeenCalled();
  });
});
