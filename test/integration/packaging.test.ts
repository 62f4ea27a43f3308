import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const testRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

// Runs a program against the BUILT packages (no tessera-source condition), the way a user's
// code loads them: catches a broken bundle step or exports map that source-level tests miss.
function runBuilt(source: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: testRoot, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('built packages', () => {
  it('compose the test preset and run a tool-using turn from dist', () => {
    const result = runBuilt(`
      import { z } from 'zod';
      import { createKernel, defineTool, toolsPlugin, KernelCompositionError } from '@tessera/kernel';
      import { FakeClock } from '@tessera/kernel/testing';
      import { testPreset } from '@tessera/preset-test';
      import { messageSchema } from '@tessera/contracts/schemas';
      import { TesseraError } from '@tessera/contracts';
      const echo = defineTool({ name: 'echo', description: 'e', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => ({ success: true, output: text }) });
      const kernel = await createKernel({ plugins: [testPreset({ turns: [{ toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'ok' }] }), toolsPlugin(echo)] });
      const session = kernel.createSession();
      const text = await session.run('go');
      const valid = session.getHistory().every((message) => messageSchema.safeParse(message).success);
      // The kernel's bundle and this program share the one contracts bundle: its error classes match.
      const composition = await createKernel({ plugins: [testPreset(), testPreset()] }).catch((error) => error instanceof KernelCompositionError && error instanceof TesseraError);
      const bundles = ['@tessera/kernel', '@tessera/contracts', '@tessera/contracts/schemas'].map((name) => import.meta.resolve(name).split('/').slice(-3).join('/'));
      console.log(JSON.stringify({ text, valid, composition, fake: typeof FakeClock, bundles }));
      await kernel.shutdown();
    `);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ text: 'ok', valid: true, composition: true, fake: 'function', bundles: ['kernel/dist-bundle/index.js', 'contracts/dist-bundle/index.js', 'contracts/dist-bundle/schemas.js'] });
  });
});
