import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHooksFile } from './index.js';

describe('readHooksFile (re-exported from the hook runner)', () => {
  it('reads a plugin hooks.json with its description and reports bad JSON with a line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-hooks-'));
    const good = join(dir, 'hooks.json');
    await writeFile(good, JSON.stringify({ description: 'x', hooks: { Stop: [{ hooks: [{ type: 'command', command: 'true', timeout: 5 }] }] } }));
    const read = await readHooksFile(good);
    expect(read.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(read.value.Stop?.[0]?.hooks[0]).toMatchObject({ type: 'command', command: 'true', timeout: 5 });
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{\n  "hooks": {,\n}');
    const broken = await readHooksFile(bad);
    expect(broken.diagnostics[0]).toMatchObject({ severity: 'error', file: bad, line: 2 });
  });
});
