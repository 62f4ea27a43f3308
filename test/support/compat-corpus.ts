import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

/**
 * The two corpora the format tests read:
 * - the project's own synthetic fixtures (`test/fixtures/compat/`), always present;
 * - the real-world files in `../shared/compat/` beside the clone, present in CI and on
 *   developers' machines but not on a plain clone.
 * Both use the same folder layout, so one test body serves either.
 */
export interface Corpus {
  readonly label: string;
  readonly root: string;
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const fixtureCorpus: Corpus = { label: 'fixtures', root: join(repoRoot, 'test', 'fixtures', 'compat') };

const realRoot = process.env.TESSERA_COMPAT_DIR ?? join(repoRoot, '..', 'shared', 'compat');
export const realCorpus: Corpus & { readonly present: boolean; readonly skipReason: string } = {
  label: 'real-world corpus',
  root: realRoot,
  present: existsSync(join(realRoot, 'claude')),
  skipReason: `${realRoot} is not there (clone the shared corpus beside the repository, or set TESSERA_COMPAT_DIR, to run it)`,
};

/** Every corpus present on this machine: the fixtures, then the real-world files if found. */
export const corpora: readonly Corpus[] = realCorpus.present ? [fixtureCorpus, realCorpus] : [fixtureCorpus];

/**
 * A suite that needs the real-world corpus. Without it the suite is registered as skipped,
 * with the reason in its name, and its body is never run (so it cannot read missing files).
 */
export function describeRealCorpus(name: string, body: (corpus: Corpus) => void): void {
  if (realCorpus.present) {
    describe(`${name} (real-world corpus)`, () => body(realCorpus));
    return;
  }
  describe.skip(`${name} (real-world corpus skipped: not found)`, () => {
    it(`needs ${realCorpus.root}`, () => undefined);
  });
}
