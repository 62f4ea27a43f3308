import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesFrom } from './hook-runner.js';
import { mergeHooksConfigs, parseHooksConfig, readHooksFile } from './parse-hooks-config.js';

// Events Tessera does not run are kept and reported, never dropped with an error.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-hooks-leniency-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const expansion = { matcher: '', hooks: [{ type: 'command', command: 'expand-prompt', timeout: 5 }] };

describe('hook events Tessera does not run', () => {
  it('keeps UserPromptExpansion with a warning, next to the events it runs', () => {
    const { value, diagnostics } = parseHooksConfig(
      { UserPromptExpansion: [expansion], UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'log' }] }] },
      'settings.json',
    );
    expect(value.UserPromptExpansion).toEqual([{ matcher: '', hooks: [{ type: 'command', command: 'expand-prompt', timeout: 5 }] }]);
    expect(value.UserPromptSubmit).toHaveLength(1);
    expect(diagnostics).toMatchObject([{ severity: 'warning', file: 'settings.json', path: 'hooks.UserPromptExpansion' }]);
    expect(diagnostics[0]!.message).toMatch(/Claude Code hook event Tessera does not run yet/);
  });

  it('keeps an event no tool knows with a warning that suggests a typo', () => {
    const { value, diagnostics } = parseHooksConfig({ PreToolUSe: [expansion] }, 'settings.json');
    expect(value.PreToolUSe).toHaveLength(1);
    expect(diagnostics).toMatchObject([{ severity: 'warning', path: 'hooks.PreToolUSe' }]);
    expect(diagnostics[0]!.message).toMatch(/check the spelling/);
  });

  it('checks the handlers of a kept event like any other', () => {
    const { value, diagnostics } = parseHooksConfig({ Setup: [{ hooks: [{ type: 'command' }, { type: 'command', command: 'init' }] }] }, 'settings.json');
    expect(value.Setup).toEqual([{ hooks: [{ type: 'command', command: 'init' }] }]);
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([['warning', 'hooks.Setup'], ['error', 'hooks.Setup[0].hooks[0]']]);
  });

  it('merges kept events across layers but never turns them into runnable entries', () => {
    const user = parseHooksConfig({ UserPromptExpansion: [expansion] }, 'user.json').value;
    const project = parseHooksConfig({ UserPromptExpansion: [{ hooks: [{ type: 'command', command: 'other' }] }], Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] }, 'project.json').value;
    const merged = mergeHooksConfigs(user, project);
    expect(merged.UserPromptExpansion).toHaveLength(2);
    expect(entriesFrom(merged, { file: 'merged' }).map((entry) => entry.event)).toEqual(['Stop']);
  });
});

describe('hooks files', () => {
  it('reads a file with a newer event without an error, keeping its other hooks', async () => {
    const file = join(dir, 'settings.json');
    await writeFile(file, JSON.stringify({ hooks: { UserPromptExpansion: [expansion], PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard' }] }] } }));
    const { value, diagnostics } = await readHooksFile(file);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(value.PreToolUse?.[0]?.hooks[0]).toMatchObject({ command: 'guard' });
    expect(value.UserPromptExpansion).toHaveLength(1);
  });

  it('reads a bare event map (no "hooks" wrapper) with a warning', async () => {
    const file = join(dir, 'bare.json');
    await writeFile(file, JSON.stringify({ Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] }));
    const { value, diagnostics } = await readHooksFile(file);
    expect(value.Stop).toHaveLength(1);
    expect(diagnostics).toMatchObject([{ severity: 'warning', file }]);
    expect(diagnostics[0]!.message).toContain('"hooks"');
  });

  it('still reads nothing, silently, from a settings file without hooks', async () => {
    const file = join(dir, 'plain.json');
    await writeFile(file, JSON.stringify({ permissions: { allow: ['Read'] } }));
    expect(await readHooksFile(file)).toEqual({ value: {}, diagnostics: [] });
  });
});
