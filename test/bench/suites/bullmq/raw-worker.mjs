// The floor beside the bench: a BullMQ worker with nothing of Tessera, running a no-op
// processor on the same machine and settings (concurrency, removeOnComplete). It prints
// "ready", then its count of finished jobs whenever it changed (every 2 ms at most).
// argv[2]: JSON { port, queue, concurrency }.
import { Worker } from 'bullmq';

const { port, queue, concurrency } = JSON.parse(process.argv[2]);
let done = 0;
const worker = new Worker(queue, async () => {
  done += 1;
  return 'ok';
}, { connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null }, concurrency });
await worker.waitUntilReady();
process.stdout.write('ready\n');
let reported = 0;
setInterval(() => {
  if (done === reported) return;
  reported = done;
  process.stdout.write(`done ${done}\n`);
}, 2);
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
