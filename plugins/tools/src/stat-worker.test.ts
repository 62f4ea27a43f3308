import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileTimes } from './file-times.js';
import { globTool, newestMatches } from './glob-tool.js';
import { IgnoreRules } from './ignore-rules.js';
import { NewestFiles } from './newest-files.js';
import { StatWorker } from './stat-worker.js';
import { tempDir, toolContext } from './test-support.js';

const FILES = 3_000;

describe('Glob with the stat worker', () => {
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    const writes: Array<Promise<void>> = [];
    for (let index = 0; index < FILES; index += 1) {
      const path = join(dir, `d${index % 30}`, `e${index % 7}`, `f${index}.${index % 3 === 0 ? 'md' : 'ts'}`);
      writes.push(
        (async () => {
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, 'x');
          // Times in a scrambled order, unrelated to the walk order, a few of them tied.
          const when = new Date(Date.UTC(2024, 0, 1) + ((index * 7919) % 2_500) * 1000);
          await utimes(path, when, when);
        })(),
      );
    }
    await Promise.all(writes);
  });
  afterAll(async () => {
    await StatWorker.stop();
    await cleanup();
  });

  const rules = () => IgnoreRules.create(dir, dir);

  it('finds the same files in the same order as stating on one thread, on both walks', async () => {
    const worker = await StatWorker.started();
    expect(worker).toBeDefined();
    for (const [pattern, fastPath] of [['**/*.ts', true], ['d1*/**/*.ts', false], ['**/*.ts', false]] as const) {
      for (const limit of [100, 5_000]) {
        const alone = await newestMatches(pattern, dir, rules(), limit, { fastPath });
        const before = worker!.completed();
        const shared = await newestMatches(pattern, dir, rules(), limit, { fastPath, worker });
        expect(shared).toEqual(alone);
        // The worker did take a share: without it this test would compare the path with itself.
        expect(worker!.completed()).toBeGreaterThan(before);
      }
    }
    const all = await newestMatches('**/*.ts', dir, rules(), 5_000);
    expect(all.count).toBe(FILES - FILES / 3);
  });

  it('falls back to stating on the calling thread when the worker dies mid-call', async () => {
    const worker = await StatWorker.started();
    const expected = await newestMatches('**/*.ts', dir, rules(), 50);
    const dying = worker!.crashForTesting();
    const found = await newestMatches('**/*.ts', dir, rules(), 50, { worker });
    await dying;
    expect(found).toEqual(expected);
    // A later call starts a fresh worker.
    const next = await StatWorker.started();
    expect(next).toBeDefined();
    expect(next).not.toBe(worker);
  });

  it('never waits for a worker that has already exited', async () => {
    const worker = await StatWorker.started();
    const expected = await newestMatches('**/*.ts', dir, rules(), 50);
    await worker!.crashForTesting();
    // Let the exit event be processed: the worker is now known to be gone.
    await new Promise((resolve) => setImmediate(resolve));
    const found = await Promise.race([
      newestMatches('**/*.ts', dir, rules(), 50, { worker }),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 5_000)),
    ]);
    expect(found).toEqual(expected);
    await expect(worker!.mtimes(['/x'])).rejects.toThrow(/stopped/);
  });

  it('is used by the Glob tool by default and gives the same answer as statWorker: false', async () => {
    await StatWorker.started();
    const shared = await globTool().execute({ pattern: '**/*.ts' }, toolContext(dir));
    const alone = await globTool({ statWorker: false }).execute({ pattern: '**/*.ts' }, toolContext(dir));
    expect(shared.success).toBe(true);
    expect(shared.data).toEqual(alone.data);
    expect(shared.data?.truncated).toBe(true);
    expect(shared.data?.numFiles).toBe(FILES - FILES / 3);
  });

  it('reports an aborted search as aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await globTool().execute({ pattern: '**/*.ts' }, toolContext(dir, { signal: controller.signal }));
    expect(result).toMatchObject({ success: false, errorCode: 'aborted' });
  });
});

describe('FileTimes', () => {
  function fakeWorker(behaviour: { backlog?: number; answer?: (paths: string[]) => Promise<Float64Array> }) {
    const requests: string[][] = [];
    const worker = {
      backlog: () => behaviour.backlog ?? 0,
      mtimes(paths: string[]) {
        requests.push(paths);
        return behaviour.answer ? behaviour.answer(paths) : Promise.resolve(new Float64Array(paths.length).fill(7));
      },
    } as unknown as StatWorker;
    return { worker, requests };
  }

  const here = fileURLToPath(import.meta.url);
  const paths = Array.from({ length: 300 }, () => here);

  it('sends batches to a worker that keeps up and offers its answers', async () => {
    const { worker, requests } = fakeWorker({});
    const newest = new NewestFiles(1_000);
    const times = new FileTimes(newest, worker);
    for (const path of paths) times.add(path);
    await times.done();
    expect(requests.flat()).toHaveLength(300);
    expect(newest.count).toBe(300);
    expect(newest.sorted().every((entry) => entry.mtimeMs === 7)).toBe(true);
  });

  it('stats itself while the worker is behind', async () => {
    const { worker, requests } = fakeWorker({ backlog: 10_000 });
    const newest = new NewestFiles(1_000);
    const times = new FileTimes(newest, worker);
    for (const path of paths) times.add(path);
    await times.done();
    expect(requests).toHaveLength(0);
    expect(newest.count).toBe(300);
    expect(newest.sorted()[0]!.mtimeMs).toBeGreaterThan(1e12);
  });

  it('re-stats a path the worker could not stat, and a whole batch the worker failed', async () => {
    let call = 0;
    const { worker } = fakeWorker({
      answer: (batch) => {
        call += 1;
        if (call === 1) return Promise.resolve(new Float64Array(batch.length).fill(Number.NaN));
        return Promise.reject(new Error('worker gone'));
      },
    });
    const newest = new NewestFiles(1_000);
    const times = new FileTimes(newest, worker);
    for (const path of paths) times.add(path);
    await times.done();
    expect(newest.count).toBe(300);
    expect(newest.sorted().every((entry) => entry.mtimeMs > 1e12)).toBe(true);
  });
});

describe('StatWorker and process exit', () => {
  const dist = fileURLToPath(new URL('../dist/stat-worker.js', import.meta.url));

  it.skipIf(!existsSync(dist))('never keeps a process alive once its answers are in', () => {
    const script = `
      const { StatWorker } = await import(${JSON.stringify(dist)});
      const worker = await StatWorker.started();
      const times = await worker.mtimes([${JSON.stringify(fileURLToPath(import.meta.url))}]);
      console.log(times[0] > 0 ? 'stated' : 'no time');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('stated');
    // Killed by the timeout (signal set) means the idle worker held the process open.
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
  });

  it.skipIf(!existsSync(dist))('never keeps a process alive when it was started and never asked (a Glob that stated on its own thread)', () => {
    const script = `
      const { StatWorker } = await import(${JSON.stringify(dist)});
      console.log((await StatWorker.started()) ? 'online' : 'none');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.stdout.trim()).toBe('online');
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
  });
});
