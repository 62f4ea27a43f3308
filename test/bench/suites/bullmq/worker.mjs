// A bench worker process: no-op agent tasks (a runner that finishes at once), so the bench
// measures the runtime's own cost: Redis state, BullMQ jobs and the event stream.
// argv[2]: JSON { port, queue, concurrency, clockOffset }. Prints "ready" once it takes jobs.
import { systemClock } from '@tessera/contracts';
import { ManualBackgroundTaskRunner } from '@tessera/plugin-background';
import { startBackgroundWorker } from '@tessera/plugin-background-bullmq';

const { port, queue, concurrency, clockOffset } = JSON.parse(process.argv[2]);
// Timestamps on the bench's clock: the monotonic clock all processes share, plus the offset the
// bench computed (a process's own `performance.timeOrigin` can be a millisecond off another's).
const offset = clockOffset ?? performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6;
const clock = { ...systemClock, now: () => Number(process.hrtime.bigint()) / 1e6 + offset };
const worker = await startBackgroundWorker({
  connection: { host: '127.0.0.1', port },
  queue,
  kinds: ['agent'],
  runners: [new ManualBackgroundTaskRunner({ kind: 'agent', autoResolve: true })],
  concurrency,
  clock,
  onError: (error, context) => process.stderr.write(`worker ${context.phase}: ${error?.message ?? error}\n`),
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => void worker.shutdown({ graceMs: 0 }).then(() => process.exit(0)));
