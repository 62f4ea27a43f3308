import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, type KernelDescription } from '@tessera/kernel';
import { parseRelnotesArgs } from './args.js';
import { releaseNotesPreset } from './release-notes-preset.js';
import { relnotesPresetOptions } from './relnotes-options.js';

/**
 * `kernel.describe()` of what `relnotes` composes with `ANTHROPIC_API_KEY` set, as text: the
 * README shows it and a test keeps the two equal. No key is needed: nothing calls the model.
 */
export async function describeReleaseNotesAgent(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'relnotes-describe-'));
  try {
    const io = { stdout: () => undefined, stderr: () => undefined, cwd: dir, home: dir, env: {} };
    const options = relnotesPresetOptions(parseRelnotesArgs(['describe']), io, { kind: 'profile', name: 'anthropic', profile: { type: 'anthropic' } });
    const kernel = await createKernel({ plugins: releaseNotesPreset(options) });
    try {
      return formatDescription(kernel.describe());
    } finally {
      await kernel.shutdown();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One block per plugin, in composition order, then what was replaced and decorated. */
export function formatDescription(description: KernelDescription): string {
  const lines: string[] = [`${description.plugins.length} plugins, in composition order:`];
  for (const plugin of description.plugins) {
    lines.push(plugin.name);
    const field = (label: string, names: readonly string[]): void => {
      if (names.length > 0) lines.push(`  ${label.padEnd(12)}${names.join(', ')}`);
    };
    field('provides', plugin.provides);
    field('contributes', plugin.contributes);
    field('requires', plugin.requires);
    field('optional', plugin.optional);
    field('replaces', plugin.replaces);
    field('taps', plugin.taps.map((tap) => `${tap.hook}@${tap.stage}`));
  }
  const replaced = Object.entries(description.replaced);
  lines.push('', `replaced: ${replaced.length === 0 ? 'none' : replaced.map(([name, by]) => `${name} → ${by}`).join(', ')}`);
  const decorated = Object.entries(description.decorated);
  lines.push(`decorated: ${decorated.length === 0 ? 'none' : decorated.map(([token, by]) => `${token} ← ${by.join(', ')}`).join('; ')}`);
  return `${lines.join('\n')}\n`;
}
