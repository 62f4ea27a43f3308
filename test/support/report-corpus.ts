// Vitest global setup: says once per run whether the real-world corpus suites run.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { realCorpus } from './compat-corpus.js';

function countFiles(dir: string): number {
  let count = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    count += statSync(path).isDirectory() ? countFiles(path) : 1;
  }
  return count;
}

export default function reportCorpus(): void {
  if (realCorpus.present) {
    console.log(`compat corpus: real-world suites run over ${countFiles(realCorpus.root)} files in ${realCorpus.root}`);
  } else {
    console.log(`compat corpus: real-world suites SKIPPED — ${realCorpus.skipReason}; the fixtures in test/fixtures/compat still run`);
  }
}
