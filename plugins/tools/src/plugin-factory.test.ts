import { createKernel } from '@tessera/kernel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ioState } from '../../../test/support/io-guard.js';
import { InMemorySandboxClient } from './sandbox/in-memory-sandbox-client.js';
import {
  bashOutputToolPlugin,
  bashToolPlugin,
  builtinTools,
  editToolPlugin,
  globToolPlugin,
  grepToolPlugin,
  killShellToolPlugin,
  readToolPlugin,
  sandboxPathsPlugin,
  toolSessionStatePlugin,
  webFetchToolPlugin,
  webSearchToolPlugin,
  writeToolPlugin,
} from './plugins.js';

// A plugin factory only keeps and checks its options: with an empty environment it neither
// throws nor touches the file system or spawns anything, and composing its value into a kernel
// builds nothing (tools, their state and ShellDirectories come when a session asks).

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

describe('tool plugin factories', () => {
  it('with an empty environment: do not throw, do no I/O, and composing builds nothing', async () => {
    const client = new InMemorySandboxClient();
    process.env = {};
    const cwd = vi.spyOn(process, 'cwd');
    ioState.forbidden = true;
    const plugins = builtinTools();
    builtinTools({ sandbox: { client }, additionalDirectories: ['../elsewhere'], exclude: ['WebSearch'] });
    for (const make of [bashToolPlugin, bashOutputToolPlugin, killShellToolPlugin, readToolPlugin, writeToolPlugin, editToolPlugin, globToolPlugin, grepToolPlugin, webFetchToolPlugin, webSearchToolPlugin, toolSessionStatePlugin]) {
      expect(make().name).toMatch(/^tool-/);
    }
    sandboxPathsPlugin();
    const kernel = await createKernel({ plugins });
    expect(kernel.describe().plugins.map((plugin) => plugin.name)).toContain('tool-session-state');
    await kernel.shutdown();
    expect(ioState.calls).toEqual([]);
    expect(cwd).not.toHaveBeenCalled();
  });
});
