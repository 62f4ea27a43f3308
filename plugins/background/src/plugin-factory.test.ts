import { createKernel } from '@tessera/kernel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ioState } from '../../../test/support/io-guard.js';
import { backgroundRuntime } from './background-runtime.js';

// A plugin factory only keeps and checks its options: with an empty environment it neither
// throws nor touches the file system or spawns anything, and composing its value into a kernel
// builds nothing (the manager and its log directory come on first use).

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

describe('backgroundRuntime() factory', () => {
  it('with an empty environment: does not throw, does no I/O, and composing builds nothing', async () => {
    process.env = {};
    const cwd = vi.spyOn(process, 'cwd');
    ioState.forbidden = true;
    const plugin = backgroundRuntime();
    backgroundRuntime({ maxConcurrent: 2, shell: { logDir: '/nonexistent/tessera-bg' } });
    const kernel = await createKernel({ plugins: [plugin] });
    expect(kernel.describe().plugins[0]).toMatchObject({ name: 'background', provides: ['BackgroundTasks', 'BackgroundTaskManager'], requires: [], optional: ['Clock', 'Diagnostics'] });
    await kernel.shutdown();
    expect(ioState.calls).toEqual([]);
    expect(cwd).not.toHaveBeenCalled();
  });
});
