// A background worker in its own process, for the cross-process tests. Runs the BUILT package.
// argv[2]: JSON of startBackgroundWorker options. Prints "ready <id>" once it takes jobs.
import { startBackgroundWorker } from '@tessera/plugin-background-bullmq';

const options = JSON.parse(process.argv[2]);
const worker = await startBackgroundWorker({ ...options, onError: (error, context) => process.stderr.write(`worker error ${context.phase}: ${error?.message ?? error}\n`) });
process.stdout.write(`ready ${worker.id}\n`);
process.on('SIGTERM', () => {
  void worker.shutdown({ graceMs: Number(process.env.GRACE_MS ?? 5000) }).then(() => process.exit(0));
});
