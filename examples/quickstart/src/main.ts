import { runQuickstart } from './quickstart.js';

try {
  await runQuickstart({ delayMs: 15 });
} catch (error) {
  console.error(`quickstart failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
