import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { Diagnostic } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { readAgentDefinition } from './agent-definition.js';
import { readCommandFile } from './command-file.js';
import { corpora, describeRealCorpus, fixtureCorpus, type Corpus } from '../../../test/support/compat-corpus.js';
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

const errorsOf = (diagnostics: Diagnostic[]) => diagnostics.filter((d) => d.severity === 'error');

function casesOf(corpus: Corpus) {
  const files = [...walk(join(corpus.root, 'claude')), ...walk(join(corpus.root, 'plugins'))];
  return files.map((file) => [relative(corpus.root, file), kindOf(file), file] as const);
}

function countKinds(cases: ReturnType<typeof casesOf>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, kind] of cases) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

describeRealCorpus('the compatibility corpus', (corpus) => {
  it('holds the files the issue counts', () => {
    const counts = countKinds(casesOf(corpus));
    expect(counts).toMatchObject({ skill: 43 + 23, agent: 42 + 6, command: 25 + 14, settings: 17, marketplace: 4, manifest: 12 - 1 });
    expect(counts.mcp).toBe(3);
    expect(counts.hooks).toBe(10 + 4);
  });
});

describe('the fixture corpus', () => {
  it('covers every kind of file', () => {
    expect(countKinds(casesOf(fixtureCorpus))).toMatchObject({ skill: 9, agent: 13, command: 9, settings: 6, marketplace: 1, manifest: 2, mcp: 2, hooks: 3 });
  });

  it('keeps its CRLF and BOM files byte for byte (no line-ending normalisation on checkout)', () => {
    const skills = join(fixtureCorpus.root, 'claude', 'skills');
    expect(readFileSync(join(skills, 'crlf-skill', 'SKILL.md'), 'utf8')).toContain('\r\n');
    expect(readFileSync(join(skills, 'bom-skill', 'SKILL.md'), 'utf8').charCodeAt(0)).toBe(0xfeff);
  });
});

describe.each(corpora)('$label', (corpus) => {
  const cases = casesOf(corpus);
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
        expect(value.name).toMatch(/^[a-z0-9][a-z0-9._-]*$/);
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

describe('fixture files read into the expected shapes', () => {
  const claude = join(fixtureCorpus.root, 'claude');
  const skill = (id: string) => readSkillFile(join(claude, 'skills', id, 'SKILL.md')).value;
  const command = (name: string) => readCommandFile(join(claude, 'commands', `${name}.md`)).value;

  it('reads allowed-tools as a comma string, a YAML list and a JSON list alike', () => {
    expect(skill('comma-tools').allowedTools).toEqual(['Read', 'Grep', 'Bash(git log:*)', 'Bash(git diff:*)']);
    expect(skill('yaml-list-tools').allowedTools).toEqual(['Read', 'Grep', 'Glob']);
    expect(skill('json-list-tools').allowedTools).toEqual(['Read', 'Write', 'Bash(npm version:*)']);
    expect(command('commit').allowedTools).toEqual(['Bash(git add:*)', 'Bash(git status:*)', 'Bash(git commit:*)']);
    expect(command('review-pr').allowedTools).toEqual(['Bash(gh pr view:*)', 'Bash(gh pr diff:*)', 'Read']);
    expect(command('json-tools').allowedTools).toEqual(['Bash(npm install:*)', 'Read']);
  });

  it('keeps unknown keys (version, license, tags, metadata) and folds a multi-line description', () => {
    expect(skill('comma-tools').extra).toMatchObject({ version: '1.2.0', license: 'MIT' });
    expect(skill('yaml-list-tools').extra).toMatchObject({ tags: ['review', 'errors'], metadata: { category: 'review' } });
    expect(skill('yaml-list-tools').description.trim()).toBe('Reviews a pull request for error handling. Folded over two lines on purpose.');
  });

  it('turns `argument-hint: [x]` (a YAML list) back into text', () => {
    expect(skill('json-list-tools').argumentHint).toBe('[version]');
    expect(command('commit').argumentHint).toBe('[message]');
    expect(command('review-pr').argumentHint).toBe('<pr-number> [focus]');
  });

  it('reads files with no frontmatter, CRLF line endings or a BOM', () => {
    expect(skill('no-frontmatter').description).toMatch(/^Explains the project's build/);
    expect(skill('no-frontmatter').id).toBe('no-frontmatter');
    expect(command('no-frontmatter').description).toBe('Explain the file the user names, section by section.');
    expect(skill('crlf-skill')).toMatchObject({ name: 'crlf-skill', allowedTools: ['Read'] });
    expect(skill('bom-skill').name).toBe('bom-skill');
    expect(command('crlf-command').description).toBe('A command saved with CRLF line endings');
    expect(command('bom-command')).toMatchObject({ description: 'A command whose file starts with a byte order mark', argumentHint: '<name>' });
  });

  it('leaves ${CLAUDE_PLUGIN_ROOT} for the loader to expand and reads the invocation flags', () => {
    const root = skill('plugin-root');
    expect(root.allowedTools).toEqual(['Bash(${CLAUDE_PLUGIN_ROOT}/scripts/check.sh:*)']);
    expect(root).toMatchObject({ disableModelInvocation: true, model: 'sonnet', context: 'fork', agent: 'Explore', whenToUse: 'After editing a LaTeX file.' });
    expect(command('json-tools').disableModelInvocation).toBe(true);
  });

  it('reads .mcp.json with and without the mcpServers wrapper', () => {
    const market = join(fixtureCorpus.root, 'plugins', 'fixtures__market', 'plugins');
    expect(Object.keys(readMcpConfig(join(market, 'full-plugin', '.mcp.json')).value.servers)).toEqual(['deploy-api']);
    expect(Object.keys(readMcpConfig(join(market, 'no-manifest', '.mcp.json')).value.servers)).toEqual(['search']);
  });

  it('reads a marketplace whose entries use every source kind, one defined inline', () => {
    const { value } = readMarketplace(join(fixtureCorpus.root, 'plugins', 'fixtures__market', '.claude-plugin', 'marketplace.json'));
    expect(value.plugins.map((plugin) => plugin.name)).toEqual(['full-plugin', 'no-manifest', 'no-version', 'inline-defined', 'from-github', 'from-git', 'from-npm']);
    expect(value.plugins.find((plugin) => plugin.name === 'inline-defined')).toMatchObject({ strict: false });
  });

  it('reads a plugin without a version, and one without plugin.json', () => {
    const market = join(fixtureCorpus.root, 'plugins', 'fixtures__market', 'plugins');
    const noVersion = readPluginManifest(join(market, 'no-version'));
    expect(noVersion.value.name).toBe('no-version');
    expect(noVersion.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const noManifest = readPluginManifest(join(market, 'no-manifest'));
    expect(noManifest.value.manifest).toBeUndefined();
    expect(noManifest.value.name).toBe('no-manifest');
  });
});
