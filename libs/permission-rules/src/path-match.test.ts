import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realPathNearest } from './path-match.js';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-path-match-')));
  mkdirSync(join(root, 'real', 'sub'), { recursive: true });
  writeFileSync(join(root, 'real', 'sub', 'file.txt'), 'x');
  symlinkSync(join(root, 'real'), join(root, 'link'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('realPathNearest', () => {
  it('resolves an existing path through a symlinked directory', () => {
    expect(realPathNearest(join(root, 'link', 'sub', 'file.txt'))).toBe(join(root, 'real', 'sub', 'file.txt'));
    expect(realPathNearest(join(root, 'link'))).toBe(join(root, 'real'));
  });

  it('resolves a path that does not exist yet through its nearest existing ancestor', () => {
    expect(realPathNearest(join(root, 'link', 'sub', 'new.txt'))).toBe(join(root, 'real', 'sub', 'new.txt'));
    expect(realPathNearest(join(root, 'link', 'a', 'b', 'c.txt'))).toBe(join(root, 'real', 'a', 'b', 'c.txt'));
  });

  it('keeps the root and a path under a missing top-level directory as they are', () => {
    expect(realPathNearest('/')).toBe('/');
    expect(realPathNearest('/no-such-top-level-dir-tessera/x')).toBe('/no-such-top-level-dir-tessera/x');
  });
});
