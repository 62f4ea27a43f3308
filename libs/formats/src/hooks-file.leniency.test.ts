import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHooksFile } from './index.js';

// The hooks-file reader formats re-exports: a newer event never costs the file its other hooks.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-hooks-file-leniency-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('readHooksFile from @tessera/formats', () => {
  it('keeps a plugin hooks.json event Tessera does not run, with a warning', async () => {
    const file = join(dir, 'hooks.json');
    await writeFile(file, JSON.stringify({
      description: 'expands prompts',
      hooks: {
        UserPromptExpansion: [{ hooks: [{ type: 'command', command: '"${CLAUDE_PLUGIN_ROOT}/expand.sh"' }] }],
        Stop: [{ hooks: [{ type: 'command', command: 'true' }] }],
      },
    }));
    const { value, diagnostics } = await readHooksFile(file, { pluginRoot: dir });
    expect(value.Stop).toHaveLength(1);
    expect(value.UserPromptExpansion).toEqual([{ hooks: [{ type: 'command', command: '"${CLAUDE_PLUGIN_ROOT}/expand.sh"' }] }]);
    expect(diagnostics).toMatchObject([{ severity: 'warning', file, path: 'hooks.UserPromptExpansion' }]);
  });
});
