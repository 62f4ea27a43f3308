import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { corpora, describeRealCorpus, fixtureCorpus } from '../../../test/support/compat-corpus.js';
import { compileMatcher } from './matcher.js';
import { mergeHooksConfigs, parseHooksConfig, readHooksFile } from './parse-hooks-config.js';

async function jsonFiles(dir: string, name?: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await jsonFiles(path, name)));
    else if (entry.name.endsWith('.json') && (name === undefined || entry.name === name)) out.push(path);
  }
  return out;
}

describe.each(corpora)('hooks in the $label', ({ root }) => {
  it('loads every settings.json and hooks.json with no error diagnostics', async () => {
    const files = [
      ...(await jsonFiles(join(root, 'claude', 'settings'))),
      ...(await jsonFiles(join(root, 'claude', 'plugin-hooks'))),
      ...(await jsonFiles(join(root, 'plugins'), 'hooks.json')),
    ];
    expect(files.length).toBeGreaterThanOrEqual(9);
    let handlers = 0;
    for (const file of files) {
      const { value, diagnostics } = await readHooksFile(file);
      expect(diagnostics.filter((d) => d.severity === 'error'), file).toEqual([]);
      handlers += Object.values(value).flat().reduce((sum, group) => sum + group!.hooks.length, 0);
    }
    expect(handlers).toBeGreaterThan(10);
  });
});

describeRealCorpus('hooks corpus', (corpus) => {
  it('has the settings and hooks files the corpus README counts', async () => {
    const files = [
      ...(await jsonFiles(join(corpus.root, 'claude', 'settings'))),
      ...(await jsonFiles(join(corpus.root, 'claude', 'plugin-hooks'))),
      ...(await jsonFiles(join(corpus.root, 'plugins'), 'hooks.json')),
    ];
    expect(files.length).toBeGreaterThanOrEqual(30);
  });

  it('keeps matcher-less groups, "if" conditions and seconds timeouts from real plugin files', async () => {
    const { value } = await readHooksFile(join(corpus.root, 'claude', 'plugin-hooks', 'anthropics__claude-plugins-official__plugins__security-guidance__hooks__hooks.json'));
    expect(value.SessionStart?.[0]?.matcher).toBeUndefined();
    expect(value.SessionStart?.[0]?.hooks[0]).toMatchObject({ type: 'command', timeout: 180 });
    expect(value.PostToolUse?.[1]?.hooks.map((hook) => hook.if)).toContain('Bash(git commit:*)');
  });
});

describe('hooks fixtures', () => {
  const claude = join(fixtureCorpus.root, 'claude');

  it('keeps matcher-less groups, "if" conditions and seconds timeouts', async () => {
    const { value } = await readHooksFile(join(claude, 'plugin-hooks', 'fixtures__guard__hooks__hooks.json'));
    expect(value.SessionStart?.[0]?.matcher).toBeUndefined();
    expect(value.SessionStart?.[0]?.hooks[0]).toMatchObject({ type: 'command', timeout: 180 });
    expect(value.PostToolUse?.[1]?.hooks.map((hook) => hook.if)).toEqual(['Bash(git commit:*)', 'Bash(git push:*)']);
    expect(value.Stop?.[0]?.hooks[0]).toMatchObject({ type: 'prompt', timeout: 30 });
  });

  it('reads settings hooks with an empty matcher, legacy tool names and an "if" condition', async () => {
    const { value, diagnostics } = await readHooksFile(join(claude, 'settings', 'fixtures__hooks__.claude__settings.json'));
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(value.Stop?.[0]).toMatchObject({ hooks: [{ type: 'command', command: 'npm run lint --silent', timeout: 120 }] });
    expect(value.PreToolUse?.[0]?.hooks[1]).toMatchObject({ if: 'Bash(git commit:*)' });
    expect(value.PreToolUse?.map((group) => group.matcher)).toEqual(['Bash', 'Edit|MultiEdit|Write', 'Task']);
    expect(value.UserPromptSubmit).toHaveLength(1);
    expect(value.Notification).toBeUndefined();
  });

  it('reads CRLF + BOM settings and tab-indented hooks files', async () => {
    const crlf = await readHooksFile(join(claude, 'settings', 'fixtures__crlf-bom__.claude__settings.json'));
    expect(crlf.value.PostToolUse?.[0]).toMatchObject({ matcher: 'Write' });
    const tabs = await readHooksFile(join(claude, 'plugin-hooks', 'fixtures__newer-events__hooks__hooks.json'));
    expect(tabs.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(tabs.value.PreCompact?.[0]).toMatchObject({ matcher: 'auto' });
  });
});

describe('parseHooksConfig', () => {
  it('is lenient: unknown keys ignored, empty arrays fine, duplicates kept once, problems located', () => {
    const { value, diagnostics } = parseHooksConfig(
      {
        Stop: [],
        PreToolUse: [
          { matcher: 'Bash', extra: 1, hooks: [{ type: 'command', command: 'a', unknown: true }, { type: 'command', command: 'a' }] },
          { hooks: [{ type: 'command', command: 'b', timeout: 'soon' }] },
          { hooks: [{ type: 'mcp_tool', server: 'x' }, { type: 'command' }] },
        ],
        Setup: [{ hooks: [] }],
        UserPromptSubmit: 'nope',
      },
      'settings.json',
    );
    expect(value.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [{ type: 'command', command: 'a' }] },
      { hooks: [{ type: 'command', command: 'b' }] },
    ]);
    expect(value.Stop).toBeUndefined();
    expect(diagnostics.map((d) => `${d.severity} ${d.path}`)).toEqual([
      'warning hooks.PreToolUse[1].hooks[0]',
      'warning hooks.PreToolUse[2].hooks[0]',
      'error hooks.PreToolUse[2].hooks[1]',
      'warning hooks.Setup',
      'error hooks.UserPromptSubmit',
    ]);
    expect(diagnostics.every((d) => d.file === 'settings.json' && d.message.length > 20)).toBe(true);
  });

  it('warns about an "if" that is not a permission rule, naming the handler', () => {
    const parsed = parseHooksConfig(
      { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'a', if: 'Bash(git *' }, { type: 'command', command: 'b', if: 42 }, { type: 'command', command: 'c', if: 'Bash(git *)' }] }] },
      'settings.json',
    );
    const warnings = parsed.diagnostics.filter((entry) => entry.severity === 'warning');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ file: 'settings.json', path: 'hooks.PreToolUse[0].hooks[0]' });
    expect(warnings[0]!.message).toMatch(/not a valid permission rule/);
    expect(warnings[1]!.message).toMatch(/must be a permission rule string/);
    expect(parsed.value.PreToolUse![0]!.hooks.map((handler) => handler.if)).toEqual(['Bash(git *', undefined, 'Bash(git *)']);
  });

  it('reports invalid JSON with a line and column, and a missing file, without throwing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-hooks-'));
    try {
      await writeFile(join(dir, 'bad.json'), '{\n  "hooks": {\n    "Stop": [,]\n  }\n}');
      const bad = await readHooksFile(join(dir, 'bad.json'));
      expect(bad.diagnostics[0]).toMatchObject({ severity: 'error', line: 3 });
      const missing = await readHooksFile(join(dir, 'nope.json'));
      expect(missing.diagnostics[0]?.message).toMatch(/file not found/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('merges layers by concatenation', () => {
    const a = { Stop: [{ hooks: [{ type: 'command' as const, command: 'a' }] }] };
    const b = { Stop: [{ hooks: [{ type: 'command' as const, command: 'b' }] }] };
    expect(mergeHooksConfigs(a, b).Stop?.map((group) => group.hooks[0])).toEqual([
      { type: 'command', command: 'a' },
      { type: 'command', command: 'b' },
    ]);
  });
});

describe('matchers', () => {
  it('matches all, exact lists, and unanchored regexes', () => {
    expect(compileMatcher(undefined)('Anything')).toBe(true);
    expect(compileMatcher('*')('x')).toBe(true);
    expect(compileMatcher('')('x')).toBe(true);
    expect(compileMatcher('Bash')('BashOutput')).toBe(false);
    expect(compileMatcher('Edit|Write')('Write')).toBe(true);
    expect(compileMatcher('Edit, Write')('Write')).toBe(true);
    expect(compileMatcher('Edit|Write')('NotebookEdit')).toBe(false);
    expect(compileMatcher('Edit.*')('NotebookEdit')).toBe(true);
    expect(compileMatcher('mcp__memory__.*')('mcp__memory__save')).toBe(true);
    expect(compileMatcher('mcp__memory')('mcp__memory__save')).toBe(false);
    expect(compileMatcher('startup|clear|compact')('resume')).toBe(false);
    expect(compileMatcher('([')('x')).toBe(false);
  });
});
