import { Clock, ProjectMemory, UserLocalStorage } from '@tessera/contracts';
import { PluginOptionsError, createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { readProjectMemory } from '@tessera/plugin-system-prompt';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectMemory, userLocalStorage } from './index.js';

let base: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'tessera-memory-plugins-'));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('projectMemory() and userLocalStorage() in a kernel', () => {
  it('give each session services bound to its cwd', async () => {
    const one = join(base, 'one');
    const two = join(base, 'two');
    await mkdir(join(one, '.git'), { recursive: true });
    await mkdir(two, { recursive: true });
    const plugins = [projectMemory(), userLocalStorage({ root: join(base, 'home', '.tessera') })];
    const kernel = await createKernel({ plugins: testPreset({ plugins }) });
    try {
      const first = kernel.createSession({ cwd: one });
      const second = kernel.createSession({ cwd: two });
      const memoryOne = first.services.get(ProjectMemory);
      expect(first.services.get(ProjectMemory)).toBe(memoryOne);
      expect(memoryOne.root).toBe(one);
      expect(second.services.get(ProjectMemory).root).toBe(two);

      const added = await memoryOne.append({ kind: 'project', topic: 'build', text: 'npm test' });
      expect(added.event).toMatchObject({ sessionId: first.sessionId, at: new Date(kernel.get(Clock).now()).toISOString() });
      expect(await second.services.get(ProjectMemory).list()).toEqual([]);
      // The events go on the session record as memoryEvents, where resume finds them.
      first.setRecordField('memoryEvents', memoryOne.events());
      expect(first.toRecord()).toMatchObject({ memoryEvents: [{ type: 'add', topic: 'build' }] });

      const local = first.services.get(UserLocalStorage);
      await expect(local.resolveRoot()).resolves.toMatchObject({ repositoryRoot: expect.stringMatching(/one$/) });
      await local.setMemoryItem({ category: 'display-preference', key: 'theme', value: 'dark' });
      expect(await second.services.get(UserLocalStorage).readEnabledMemoryItem('display-preference', 'theme')).toBe('dark');
    } finally {
      await kernel.shutdown();
    }
  });

  it("a session started in a repository's sub-folder keeps memory at the repository root (or the nearest folder that has it), where the system prompt reads it", async () => {
    const repo = join(base, 'repo');
    const sub = join(repo, 'packages', 'app');
    await mkdir(join(repo, '.git'), { recursive: true });
    await mkdir(sub, { recursive: true });
    const kernel = await createKernel({ plugins: testPreset({ plugins: [projectMemory()] }) });
    try {
      const memory = kernel.createSession({ cwd: sub }).services.get(ProjectMemory);
      expect(memory.root).toBe(repo);
      await memory.append({ kind: 'project', topic: 'build', text: 'npm test' });
      expect(existsSync(join(repo, '.tessera', 'memory', 'MEMORY.md'))).toBe(true);
      expect(readProjectMemory(sub)?.content).toContain('npm test');

      await mkdir(join(sub, '.tessera', 'memory'), { recursive: true });
      expect(kernel.createSession({ cwd: join(sub) }).services.get(ProjectMemory).root).toBe(sub);
    } finally {
      await kernel.shutdown();
    }
  });

  it('describe() shows what they provide, contribute and may use; no hooks are tapped', async () => {
    const kernel = await createKernel({ plugins: testPreset({ plugins: [projectMemory(), userLocalStorage()] }) });
    try {
      const plugins = kernel.describe().plugins.filter((plugin) => plugin.name === 'project-memory' || plugin.name === 'user-local-storage');
      expect(plugins).toHaveLength(2);
      for (const plugin of plugins) {
        expect(plugin.contributes).toEqual(['SessionServiceFactory']);
        expect(plugin.optional).toEqual(['Clock']);
        expect(plugin.taps).toEqual([]);
      }
      expect(plugins.map((plugin) => plugin.provides)).toEqual([['ProjectMemory'], ['UserLocalStorage']]);
    } finally {
      await kernel.shutdown();
    }
  });

  it('one plugin value composed into two kernels gives each its own services', async () => {
    const plugin = projectMemory({ root: base });
    const [a, b] = await Promise.all([createKernel({ plugins: testPreset({ plugins: [plugin] }) }), createKernel({ plugins: testPreset({ plugins: [plugin] }) })]);
    try {
      expect(a.get(ProjectMemory)).not.toBe(b.get(ProjectMemory));
      expect(a.get(ProjectMemory).root).toBe(base);
      expect(a.createSession({ cwd: join(base, 'elsewhere') }).services.get(ProjectMemory).root).toBe(base);
    } finally {
      await Promise.all([a.shutdown(), b.shutdown()]);
    }
  });

  it('factories validate options and do no I/O', async () => {
    expect(() => projectMemory({ root: 'relative' })).toThrow(PluginOptionsError);
    expect(() => projectMemory(null as never)).toThrow(/options must be an object/);
    expect(() => userLocalStorage({ root: '' })).toThrow(PluginOptionsError);
    expect(() => userLocalStorage({ root: '.tessera' })).toThrow(/root must be an absolute path/);
    const missing = join(base, 'never-created');
    projectMemory({ root: missing });
    userLocalStorage({ root: missing });
    await expect(mkdtemp(join(missing, 'x'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
