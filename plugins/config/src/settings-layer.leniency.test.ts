import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempTree } from './config.test-helper.js';
import { loadConfig } from './load-config.js';
import { readSettingsLayer } from './settings-layer.js';

// A shared .claude/settings.json is written for Claude Code: what it accepts must load here.
let cleanup = () => {};
afterEach(() => cleanup());
function settings(content: string | object) {
  const tree = tempTree({ 'repo/.claude/settings.json': content });
  cleanup = tree.cleanup;
  return { file: join(tree.root, 'repo', '.claude', 'settings.json'), cwd: join(tree.root, 'repo'), home: join(tree.root, 'home') };
}
const severities = (diagnostics: Array<{ severity: string; path?: string }>) => diagnostics.map((d) => [d.severity, d.path]);

describe('settings keys', () => {
  it('keeps Claude Code settings Tessera does not use, as info, and warns only about unknown keys', () => {
    const { file } = settings({ model: 'sonnet', spinnerTipsEnabled: false, alwaysThinkingEnabled: true, sandbox: { enabled: true }, modle: 'opus' });
    const { layer, diagnostics } = readSettingsLayer(file, 'project');
    expect(layer.failed).toBe(false);
    expect(layer.settings).toMatchObject({ model: 'sonnet', spinnerTipsEnabled: false, sandbox: { enabled: true }, modle: 'opus' });
    expect(severities(diagnostics)).toEqual([
      ['info', 'spinnerTipsEnabled'],
      ['info', 'alwaysThinkingEnabled'],
      ['info', 'sandbox'],
      ['warning', 'modle'],
    ]);
  });

  it('keeps hooks for events Tessera does not run', () => {
    const hooks = { UserPromptExpansion: [{ hooks: [{ type: 'command', command: 'expand' }] }] };
    const { file } = settings({ hooks });
    const { layer, diagnostics } = readSettingsLayer(file, 'project');
    expect(diagnostics).toEqual([]);
    expect(layer.settings?.hooks).toEqual(hooks);
  });
});

describe('values Claude Code coerces', () => {
  it('sets numeric and boolean env values as strings, as Claude Code does', () => {
    const { file } = settings({ env: { MAX_THINKING_TOKENS: 31999, CLAUDE_CODE_ENABLE_TELEMETRY: true, NODE_ENV: 'test' } });
    const { layer, diagnostics } = readSettingsLayer(file, 'project');
    expect(layer.settings?.env).toEqual({ MAX_THINKING_TOKENS: '31999', CLAUDE_CODE_ENABLE_TELEMETRY: 'true', NODE_ENV: 'test' });
    expect(severities(diagnostics)).toEqual([['info', 'env.MAX_THINKING_TOKENS'], ['info', 'env.CLAUDE_CODE_ENABLE_TELEMETRY']]);
  });

  it('drops only the env entry Claude Code would also refuse, not the whole map', () => {
    const { cwd, home } = settings({ env: { GOOD: 'yes', BAD: { nested: 1 } } });
    const { config, diagnostics } = loadConfig({ cwd, home, env: {} });
    expect(config.env).toEqual({ GOOD: 'yes' });
    expect(severities(diagnostics)).toEqual([['error', 'env.BAD']]);
  });

  it('reads enabledPlugins with version constraints as enabled, with a warning', () => {
    const { file } = settings({ enabledPlugins: { 'formatter@tools': ['^1.2.0'], 'linter@tools': false } });
    const { layer, diagnostics } = readSettingsLayer(file, 'project');
    expect(layer.settings?.enabledPlugins).toEqual({ 'formatter@tools': true, 'linter@tools': false });
    expect(severities(diagnostics)).toEqual([['warning', 'enabledPlugins["formatter@tools"]']]);
  });
});

describe('what is still refused', () => {
  it('refuses invalid JSON, as Claude Code does', () => {
    const { file } = settings('{ "model": "sonnet", }');
    const { layer, diagnostics } = readSettingsLayer(file, 'project');
    expect(layer.failed).toBe(true);
    expect(diagnostics).toMatchObject([{ severity: 'error', line: 1 }]);
  });
});
