import { createKernel } from '@tessera/kernel';
import { editCheckpoints, reversibleExecution } from '@tessera/plugin-checkpoints';
import { promptFileReferences } from '@tessera/plugin-prompt-references';
import { systemPrompt } from '@tessera/plugin-system-prompt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ioState } from '../support/io-guard.js';

// The interactive layer's plugin factories only keep and check their options: with an empty
// environment they neither throw nor touch the file system or spawn anything, and composing
// them into a kernel builds nothing (checkpoint stores, git calls and file reads come on use).

vi.mock('node:fs', (original) => import('../support/io-guard.js').then((guard) => guard.guardedModule('fs', original)));
vi.mock('node:fs/promises', (original) => import('../support/io-guard.js').then((guard) => guard.guardedModule('fs/promises', original)));
vi.mock('node:child_process', (original) => import('../support/io-guard.js').then((guard) => guard.guardedModule('child_process', original)));

const env = process.env;
afterEach(() => {
  process.env = env;
  ioState.forbidden = false;
  ioState.calls.length = 0;
});

describe('interactive-layer plugin factories', () => {
  it('with an empty environment: no throw, no I/O, and composing builds nothing', async () => {
    process.env = {};
    ioState.forbidden = true;
    const plugins = [promptFileReferences(), systemPrompt(), editCheckpoints(), reversibleExecution({ mode: 'local-first' })];
    for (let kernels = 0; kernels < 2; kernels += 1) {
      const kernel = await createKernel({ plugins });
      expect(kernel.describe().plugins.map((plugin) => plugin.name)).toHaveLength(4);
      await kernel.shutdown();
    }
    expect(ioState.calls).toEqual([]);
  });
});
