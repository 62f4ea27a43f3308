import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from this file's location (plugins/formats/src). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The shared compatibility corpus, cloned beside the repository in CI. */
export const compatRoot = join(repoRoot, '..', 'shared', 'compat');

/** A temp directory with the given files; `cleanup()` removes it. */
export function tempTree(files: Record<string, string>): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'tessera-formats-'));
  for (const [relative, content] of Object.entries(files)) {
    const path = join(root, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
