import type { JobsOptions, Queue } from 'bullmq';

interface PendingJob {
  name: string;
  data: unknown;
  opts: JobsOptions;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Adds jobs to one BullMQ queue. The adds asked for while the current tick's callbacks run go to
 * Redis together (`Queue.addBulk`: one pipeline, so one socket write and one read for Redis)
 * instead of one command and one write each; a client spawning many tasks at once spends about
 * half its CPU on those writes otherwise.
 *
 * `addBulk` fails as a whole when any of its jobs fails, without saying which ones were added.
 * Then each job of the batch is added again on its own and settles with its own outcome: a job
 * id that made it the first time is not added twice (BullMQ keeps the existing job), and a job
 * that already ran finds its task finished, which the worker skips.
 */
export class JobBatcher {
  #pending: PendingJob[] = [];

  constructor(private readonly queue: Queue) {}

  add(name: string, data: unknown, opts: JobsOptions): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#pending.push({ name, data, opts, resolve, reject }) === 1) process.nextTick(() => void this.#flush());
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 1) {
      const [job] = batch as [PendingJob];
      await this.queue.add(job.name, job.data, job.opts).then(() => job.resolve(), job.reject);
      return;
    }
    try {
      await this.queue.addBulk(batch.map(({ name, data, opts }) => ({ name, data, opts })));
    } catch {
      await Promise.all(batch.map((job) => this.queue.add(job.name, job.data, job.opts).then(() => job.resolve(), job.reject)));
      return;
    }
    for (const job of batch) job.resolve();
  }
}
