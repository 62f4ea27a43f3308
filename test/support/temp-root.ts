// Vitest global setup: every temporary directory a test run makes goes under one root that is
// removed when the run ends. Tests (and the processes they start, which inherit TMPDIR) create
// their folders with `tmpdir()`; without this, each run left hundreds of them in /tmp.
// TESSERA_KEEP_TEST_TMP=1 keeps the root and prints where it is, for looking at what a test wrote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function tempRoot(): () => void {
  const previous = process.env.TMPDIR;
  // Short on purpose: Unix socket paths made under it (tmux, test servers) have a ~107-byte limit.
  const root = mkdtempSync(join(tmpdir(), 'tessera-test-'));
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (process.env.TESSERA_KEEP_TEST_TMP === '1') {
      console.log(`test temp root kept: ${root}`);
      return;
    }
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
