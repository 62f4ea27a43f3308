import { mkdtemp, mkdir, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DefaultUserLocalStorage } from './default-user-local-storage.js';
import { InvalidUserLocalMemoryItemError, UserLocalStorageRootError } from './memory-errors.js';

let base: string;
let repository: string;
let home: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'tessera-user-local-'));
  repository = join(base, 'repo');
  home = join(base, 'home');
  await mkdir(join(repository, '.git'), { recursive: true });
  await mkdir(join(repository, 'packages', 'app'), { recursive: true });
  await mkdir(home, { recursive: true });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const storage = (root: string, cwd = join(repository, 'packages', 'app')) => new DefaultUserLocalStorage({ root, cwd, now: () => Date.UTC(2025, 0, 1) });

describe('UserLocalStorage: root validation', () => {
  it.each([
    ['empty', () => ''],
    ['relative', () => '.tessera'],
    ['repository-root', () => repository],
    ['inside-repository', () => join(repository, '.tessera')],
    ['inside-repository', () => join(repository, 'packages', 'new', 'state')],
  ])('refuses a %s root', async (problem, root) => {
    const error = await storage(root()).resolveRoot().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UserLocalStorageRootError);
    expect(error).toMatchObject({ problem, code: 'invalid_user_local_root', category: 'configuration' });
    expect((error as Error).message).toMatch(/absolute folder outside the repository/);
  });

  it('refuses a symlink that leads into the repository', async () => {
    const link = join(home, '.tessera');
    await symlink(join(repository, 'packages'), link, 'dir');
    const error = await storage(link).resolveRoot().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ problem: 'inside-repository' });
    expect((error as Error).message).toMatch(/resolves to/);
    // A child of the link that does not exist yet resolves through its existing parent.
    await expect(storage(join(link, 'later')).resolveRoot()).rejects.toMatchObject({ problem: 'inside-repository' });
  });

  it('accepts a root outside the repository, and never writes inside the repository', async () => {
    const store = storage(join(home, '.tessera'));
    const resolved = await store.resolveRoot();
    expect(resolved.repositoryRoot.endsWith(join('repo'))).toBe(true);
    await store.setMemoryItem({ category: 'view-preference', key: 'layout', value: 'split' });
    await store.categoryLocation('preferences', { create: true });
    expect((await readdir(repository)).sort()).toEqual(['.git', 'packages']);
    expect((await readdir(join(home, '.tessera'))).sort()).toEqual(['memory-projections', 'preferences']);
  });

  it('uses the cwd as the repository when no .git is found above it', async () => {
    const loose = join(base, 'loose');
    await mkdir(loose);
    await expect(storage(join(loose, 'state'), loose).resolveRoot()).rejects.toMatchObject({ problem: 'inside-repository' });
    await expect(storage(join(home, '.tessera'), loose).resolveRoot()).resolves.toMatchObject({ repositoryRoot: expect.stringMatching(/loose$/) });
  });
});

describe('UserLocalStorage: memory items', () => {
  it('sets, lists and inspects items with the spec projection', async () => {
    const store = storage(join(home, '.tessera'));
    const projection = await store.setMemoryItem({ category: 'last-visible-cwd', key: 'main', value: { cwd: '/work/app' }, source: 'host', scope: 'repository' });
    expect(projection).toMatchObject({
      category: 'last-visible-cwd',
      key: 'main',
      summary: 'last-visible-cwd main',
      valueSummary: '{"cwd":"/work/app"}',
      source: 'host',
      scope: 'repository',
      enabled: true,
      canDelete: true,
      canDisable: true,
      commandExecutionEffect: 'none',
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
    });
    expect(projection.storageLocation).toMatch(/memory-projections[/\\]user-local-memory\.json$/);
    expect(projection.displayNavigationRule).toMatch(/never becomes a command cwd/);
    expect(projection.repositoryRoot).toMatch(/repo$/);
    expect(await store.inspectMemoryItem('last-visible-cwd', 'main')).toMatchObject({ value: { cwd: '/work/app' } });
    await store.setMemoryItem({ category: 'display-preference', key: 'theme', value: 'dark' });
    expect((await store.listMemoryItems()).map((item) => item.key)).toEqual(['main', 'theme']);
    expect((await store.listMemoryItems({ category: 'display-preference' })).map((item) => item.key)).toEqual(['theme']);
    const stored = JSON.parse(await readFile(projection.storageLocation, 'utf8')) as { version: number; items: unknown[] };
    expect(stored.version).toBe(1);
    expect(stored.items).toHaveLength(2);
  });

  it('disable keeps an item inspectable but readEnabled returns null; delete removes it', async () => {
    const store = storage(join(home, '.tessera'));
    await store.setMemoryItem({ category: 'background-selection', key: 'last', value: 'task-7' });
    expect(await store.readEnabledMemoryItem('background-selection', 'last')).toBe('task-7');
    expect(await store.disableMemoryItem('background-selection', 'last')).toBe(true);
    expect(await store.readEnabledMemoryItem('background-selection', 'last')).toBeNull();
    expect(await store.inspectMemoryItem('background-selection', 'last')).toMatchObject({ enabled: false, canDisable: false, value: 'task-7' });
    // Setting a new value does not silently re-enable it.
    await store.setMemoryItem({ category: 'background-selection', key: 'last', value: 'task-8' });
    expect(await store.readEnabledMemoryItem('background-selection', 'last')).toBeNull();
    expect(await store.enableMemoryItem('background-selection', 'last')).toBe(true);
    expect(await store.readEnabledMemoryItem('background-selection', 'last')).toBe('task-8');
    expect(await store.deleteMemoryItem('background-selection', 'last')).toBe(true);
    expect(await store.deleteMemoryItem('background-selection', 'last')).toBe(false);
    expect(await store.disableMemoryItem('background-selection', 'last')).toBe(false);
    expect(await store.inspectMemoryItem('background-selection', 'last')).toBeUndefined();
    expect(await store.readEnabledMemoryItem('background-selection', 'last')).toBeNull();
  });

  it('refuses categories outside the spec, bad keys and values that are not JSON', async () => {
    const store = storage(join(home, '.tessera'));
    await expect(store.setMemoryItem({ category: 'shell-command' as never, key: 'k', value: 'rm -rf /' })).rejects.toBeInstanceOf(InvalidUserLocalMemoryItemError);
    await expect(store.setMemoryItem({ category: 'view-preference', key: '', value: 1 })).rejects.toBeInstanceOf(InvalidUserLocalMemoryItemError);
    await expect(store.setMemoryItem({ category: 'view-preference', key: 'k', value: Number.NaN })).rejects.toBeInstanceOf(InvalidUserLocalMemoryItemError);
    await expect(store.setMemoryItem({ category: 'view-preference', key: 'k', value: new Date() as never })).rejects.toBeInstanceOf(InvalidUserLocalMemoryItemError);
    await expect(store.categoryLocation('secrets' as never)).rejects.toBeInstanceOf(InvalidUserLocalMemoryItemError);
  });

  it('inspects the root, repository, every category and the items', async () => {
    const store = storage(join(home, '.tessera'));
    await store.setMemoryItem({ category: 'inspection-choice', key: 'diff', value: 'side-by-side' });
    const projection = await store.inspect();
    expect(projection.categories.map((category) => [category.category, category.exists, category.items])).toEqual([
      ['preferences', false, 0],
      ['view-state', false, 0],
      ['memory-projections', true, 1],
      ['task-associations', false, 0],
      ['workflow-metadata', false, 0],
      ['inspection-index', false, 0],
    ]);
    expect(projection.memoryItems).toHaveLength(1);
    expect(projection.root).toMatch(/\.tessera$/);
  });

  it('validates the root again after a failure (a person may fix it)', async () => {
    const root = join(home, 'link');
    await symlink(repository, root, 'dir');
    const store = storage(root);
    await expect(store.listMemoryItems()).rejects.toBeInstanceOf(UserLocalStorageRootError);
    await rm(root);
    await expect(store.listMemoryItems()).resolves.toEqual([]);
  });
});
