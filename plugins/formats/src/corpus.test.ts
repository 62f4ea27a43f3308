import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { Diagnostic } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { readAgentDefinition } from './agent-definition.js';
import { readCommandFile } from './command-file.js';
import { compatRoot } from './corpus.test-helper.js';
import { readMarketplace } from './marketplace.js';
import { readMcpConfig } from './mcp-config.js';
import { readPluginManifest } from './plugin-manifest.js';
import { parseJsonText } from './read-text.js';
import { readSkillFile } from './skill-file.js';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

type Kind = 'skill' | 'agent' | 'command' | 'manifest' | 'marketplace' | 'mcp' | 'hooks' | 'settings' | 'other';

/** What Claude Code would read each corpus file as. */
function kindOf(file: string): Kind {
  const name = basename(file);
  const parts = file.split(sep);
  if (name === 'SOURCES.md') return 'other';
  if (parts.includes('settings')) return 'settings';
  if (parts.includes('plugin-hooks') || (name === 'hooks.json' && parts.at(-2) === 'hooks')) return 'hooks';
  if (name === 'SKILL.md' || (parts.includes('skills') && name.endsWith('__SKILL.md'))) return 'skill';
  if (name === 'marketplace.json' && parts.at(-2) === '.claude-plugin') return 'marketplace';
  if (name === 'plugin.json' && parts.at(-2) === '.claude-plugin') return 'manifest';
  if (name === '.mcp.json') return 'mcp';
  if (name.endsWith('.md') && (parts.includes('agents') || parts.at(-2) === 'agents')) return 'agent';
  if (name.endsWith('.md') && (parts.includes('commands') || parts.at(-2) === 'commands')) return 'command';
  return 'other';
}

const files = [...walk(join(compatRoot, 'claude')), ...walk(join(compatRoot, 'plugins'))];
const errorsOf = (diagnostics: Diagnostic[]) => diagnostics.filter((d) => d.severity === 'error');
const cases = files.map((file) => [relative(compatRoot, file), kindOf(file), file] as const);

describe('the compatibility corpus', () => {
  it('holds the files the issue counts', () => {
    const counts: Record<string, number> = {};
    for (const [, kind] of cases) counts[kind] = (counts[kind] ?? 0) + 1;
    expect(counts).toMatchObject({ skill: 43 + 23, agent: 42 + 6, command: 25 + 14, settings: 17, marketplace: 4, manifest: 12 - 1 });
    expect(counts.mcp).toBe(3);
    expect(counts.hooks).toBe(10 + 4);
  });

  it.each(cases.filter(([, kind]) => kind !== 'other' && kind !== 'settings'))('%s reads as %s without errors', (_name, kind, file) => {
    switch (kind) {
      case 'skill': {
        const { value, diagnostics } = readSkillFile(file);
        expect(errorsOf(diagnostics)).toEqual([]);
        expect(value.description.length).toBeGreaterThan(0);
        expect(value.body.length).toBeGreaterThan(0);
        if (basename(file) === 'SKILL.md') expect(value.id).toBe(basename(dirname(file)));
        break;
      }
      case 'agent': {
        const { value, diagnostics } = readAgentDefinition(file);
        expect(errorsOf(diagnostics)).toEqual([]);
        expect(value.name).toMatch(/^[a-z0-9-]+$/);
        break;
      }
      case 'command': {
        const { value, diagnostics } = readCommandFile(file);
        expect(errorsOf(diagnostics)).toEqual([]);
        expect(value.name).toBe(basename(file, '.md'));
        expect(value.description.length).toBeGreaterThan(0);
        break;
      }
      case 'manifest': {
        const { value, diagnostics } = readPluginManifest(dirname(dirname(file)));
        expect(errorsOf(diagnostics)).toEqual([]);
        expect(value.manifest?.name).toBe(value.name);
        break;
      }
      case 'marketplace': {
        const { value, diagnostics } = readMarketplace(file);
        expect(errorsOf(diagnostics)).toEqual([]);
        expect(value.owner.name.length).toBeGreaterThan(0);
        expect(value.plugins.length).toBe((JSON.parse(readFileSync(file, 'utf8')) as { plugins: unknown[] }).plugins.length);
        break;
      }
      case 'mcp': {
        const { value, diagnostics } = readMcpConfig(file);
        expect(errorsOf(diagnostics)).toEqual([]);
        expect(Object.keys(value.servers).length).toBeGreaterThan(0);
        break;
      }
      case 'hooks': {
        // Structural hook parsing belongs to @tessera/plugin-hooks (which depends on this
        // package); here the file must be JSON with a `hooks` event map.
        const json = parseJsonText(readFileSync(file, 'utf8'), file);
        expect(json.ok).toBe(true);
        const hooks = (json as { value: { hooks?: unknown } }).value.hooks;
        expect(typeof hooks).toBe('object');
        break;
      }
    }
  });
});
