import { execFileSync } from 'node:child_process';
import { basename, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';

// test/support/temp-root.ts: a run's temporary folders live under one root it removes at the end.
describe('the test run temp root', () => {
  it('is what tmpdir() gives tests', () => {
    expect(basename(tmpdir())).toMatch(/^tessera-test-/);
  });

  it('is inherited by the processes tests start', () => {
    const childTmp = execFileSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], { encoding: 'utf8' });
    expect(childTmp).toBe(tmpdir());
    expect(dirname(childTmp)).not.toBe(childTmp);
  });
});
