import { Queue } from 'bullmq';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobBatcher } from './job-batcher.js';
import { hasRedisServer, useRedisSuite } from './testing/redis-server.test-helper.js';

const suite = useRedisSuite('tessera-bullmq-batcher-');
let queueNumber = 0;

afterEach(() => {
  vi.restoreAllMocks();
});

function queue(): Queue {
  const created = new Queue(`batch${++queueNumber}`, { connection: { host: '127.0.0.1', port: suite.redis.port } });
  suite.cleanups.push(() => created.close());
  return created;
}

describe.runIf(hasRedisServer)('JobBatcher (real redis-server)', () => {
  it('sends the adds of one tick as one addBulk, and adds a lone job on its own', async () => {
    const target = queue();
    const bulk = vi.spyOn(target, 'addBulk');
    const single = vi.spyOn(target, 'add');
    const batcher = new JobBatcher(target);
    await Promise.all(Array.from({ length: 5 }, (_, index) => batcher.add('agent', { taskId: `t${index}` }, { jobId: `t${index}`, priority: index === 3 ? 2 : undefined })));
    expect(bulk).toHaveBeenCalledTimes(1);
    expect(bulk.mock.calls[0]![0]).toHaveLength(5);
    expect(single).not.toHaveBeenCalled();
    const jobs = await target.getJobs(['waiting', 'prioritized']);
    expect(jobs.map((job) => job.id).sort()).toEqual(['t0', 't1', 't2', 't3', 't4']);
    // Each job keeps its own options.
    expect(jobs.find((job) => job.id === 't3')?.opts.priority).toBe(2);

    await batcher.add('agent', { taskId: 'late' }, { jobId: 'late' });
    expect(single).toHaveBeenCalledTimes(1);
    expect(bulk).toHaveBeenCalledTimes(1);
    expect(await target.getJob('late')).toBeDefined();
  });

  it('after a failed addBulk, adds each job on its own: one failure fails its own add only, and a job already added is not added twice', async () => {
    const target = queue();
    const batcher = new JobBatcher(target);
    // The bulk fails after adding the first job (what a dropped connection mid-pipeline can leave).
    vi.spyOn(target, 'addBulk').mockImplementationOnce(async (jobs) => {
      await target.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
      throw new Error('connection lost');
    });
    const add = target.add.bind(target);
    vi.spyOn(target, 'add').mockImplementation((name, data, opts) => (opts?.jobId === 'b' ? Promise.reject(new Error('b refused')) : add(name, data, opts)));
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((id) => batcher.add('agent', { taskId: id }, { jobId: id })));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('b refused');
    const jobs = await target.getJobs(['waiting']);
    expect(jobs.map((job) => job.id).sort()).toEqual(['a', 'c']);
    expect(await target.count()).toBe(2);
  });
});
