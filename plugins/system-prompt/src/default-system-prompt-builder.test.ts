import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AgentDefinitionContribution,
  CommandContribution,
  Diagnostics,
  SkillSourceContribution,
  SystemPromptBuilder,
  noSessionServices,
  type DiagnosticReport,
  type SessionServices,
  type SkillEntry,
} from '@tessera/contracts';
import { createKernel, definePlugin, type Kernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { DEFAULT_BASE_PROMPT, DefaultSystemPromptBuilder, SECTION_ORDER, describeProjectKind, detectProjectKind, systemPrompt, type SystemPromptOptions } from './index.js';

// Noon UTC: the same calendar day in every time zone from UTC-11 to UTC+11.
const NOON = Date.UTC(2025, 5, 15, 12);

let root: string;
let cwd: string;
let home: string;
const kernels: Kernel[] = [];

const write = (relative: string, text: string): void => {
  const path = join(cwd, relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};
const git = (...args: string[]): string => execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' }).trim();
const fixed: SystemPromptOptions = { now: () => NOON, platform: 'linux', git: false };
const builder = (options: SystemPromptOptions = {}): DefaultSystemPromptBuilder => new DefaultSystemPromptBuilder({ home, ...fixed, ...options });

function skills(name: string, entries: () => SkillEntry[]) {
  return definePlugin({
    name: `skills-${name}`,
    contributes: [SkillSourceContribution],
    register: ({ bind }) => void bind(SkillSourceContribution).toConstantValue({ name, skills: entries }),
  });
}
/**
 * What makes the listings appear: a model-invocable `skills` command and a module that asks for
 * the agent executor. Every kernel here has it, except where a test says otherwise.
 */
const listingModules = definePlugin({
  name: 'listing-modules',
  contributes: [CommandContribution],
  register({ bind }) {
    bind(CommandContribution).toConstantValue({
      name: 'listing-modules',
      systemCommands: [{ name: 'skills', description: 'skills', modelInvocable: true, execute: () => ({ success: true, message: '' }) }],
      sessionRequirements: ['agent-executor'],
    });
  },
});
const agents = definePlugin({
  name: 'agents-fixture',
  contributes: [AgentDefinitionContribution],
  register({ bind }) {
    bind(AgentDefinitionContribution).toConstantValue({ name: 'reviewer', description: 'Reviews a diff.\nBriefly.', systemPrompt: 'secret body', source: 'plugin:x' });
    bind(AgentDefinitionContribution).toConstantValue({ name: 'explorer', description: 'Finds code.', systemPrompt: 'secret body', source: 'builtin' });
  },
});
const skillEntry = (id: string, description: string, extra: Partial<SkillEntry> = {}): SkillEntry => ({ id, name: id, description, source: 'project', ...extra });

async function servicesWith(...plugins: Parameters<typeof testPreset>[0][]): Promise<SessionServices> {
  const options = Object.assign({}, ...plugins) as Parameters<typeof testPreset>[0] & { plugins?: unknown[]; unlisted?: boolean };
  const { unlisted, ...preset } = options;
  const kernel = await createKernel({ plugins: testPreset({ ...preset, plugins: [...((preset.plugins as never[]) ?? []), ...(unlisted ? [] : [listingModules])] }) });
  kernels.push(kernel);
  return kernel.createSession().services;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-system-prompt-'));
  cwd = join(root, 'project');
  home = join(root, 'home');
  mkdirSync(cwd);
  mkdirSync(home);
});
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
  rmSync(root, { recursive: true, force: true });
});

describe('DefaultSystemPromptBuilder', () => {
  it('pins the whole prompt for a fixture project', async () => {
    mkdirSync(join(cwd, '.git')); // the repository root for context files; not a real repository
    write('AGENTS.md', '# Agents\n\nUse npm.\n\n## Compact Instructions\n\nKeep file paths.\n');
    write('CLAUDE.md', 'Prefer small diffs.\n');
    write('.tessera/memory/MEMORY.md', '# Memory\n\n- build: npm run build\n');
    write('.agents/tasks/t1.md', '# Ship prompts\n\n- **Status**: in progress\n\n- [ ] tests\n');
    const services = await servicesWith({
      plugins: [
        skills('folder', () => [skillEntry('lint', 'Runs the linter.'), skillEntry('hidden', 'Not for the model.', { modelInvocable: false })]),
        skills('bundle', () => [skillEntry('audit', 'Audits   a\nfile.', { qualifiedName: 'sec:audit' })]),
        agents,
      ],
    });

    const result = await builder().build({ cwd, services, model: 'claude-test', appendSystemPrompt: 'Appended line.' });

    expect(result.prompt).toBe(
      [
        DEFAULT_BASE_PROMPT,
        `## Environment\n\n- Working directory: ${cwd}\n- Platform: linux\n- Date: 2025-06-15\n- Model: claude-test`,
        `## Context Files\n\n### ${join(cwd, 'AGENTS.md')} (project instructions)\n\n# Agents\n\nUse npm.\n\n## Compact Instructions\n\nKeep file paths.\n\n### ${join(cwd, 'CLAUDE.md')} (project instructions)\n\nPrefer small diffs.`,
        '## Project Memory\n\n# Memory\n\n- build: npm run build',
        '## Active Task Context\n\n### Ship prompts\n\n- Path: .agents/tasks/t1.md\n- Status: in progress\n- Unchecked items:\n  - [ ] tests',
        '## Skills\n\n- lint: Runs the linter.\n- sec:audit: Audits a file.',
        '## Agents\n\n- explorer: Finds code.\n- reviewer: Reviews a diff. Briefly.',
        'Appended line.',
      ].join('\n\n'),
    );
    expect(result.sections.map((section) => section.name)).toEqual(['base', 'environment', 'context-files', 'project-memory', 'task-context', 'skills', 'agents', 'append']);
    expect(result.sections.map((section) => section.name)).toEqual([...SECTION_ORDER]);
    expect(result.sections.reduce((sum, section) => sum + section.chars, 0) + 2 * (result.sections.length - 1)).toBe(result.prompt.length);
    expect(result.contextFiles).toEqual([
      { path: join(cwd, 'AGENTS.md'), bytes: 62, truncated: false },
      { path: join(cwd, 'CLAUDE.md'), bytes: 20, truncated: false },
    ]);
    expect(result.compactInstructions).toBe('Keep file paths.');
    expect(result.prompt).not.toContain('secret body');
    expect(result.prompt).not.toContain('hidden');
  });

  it('is deterministic: the same inputs give byte-identical output whatever order sources answer in', async () => {
    write('AGENTS.md', 'Rules.\n');
    let call = 0;
    const services = await servicesWith({
      plugins: [skills('shuffled', () => (call++ % 2 === 0 ? [skillEntry('b', 'B'), skillEntry('a', 'A')] : [skillEntry('a', 'A'), skillEntry('b', 'B')])), agents],
    });
    const first = await builder().build({ cwd, services });
    const second = await builder().build({ cwd, services });
    expect(second).toEqual(first);
    expect(second.prompt).toBe(first.prompt);
  });

  it('leaves empty sections out, lets the request replace the base prompt, and appends last', async () => {
    const plain = await builder().build({ cwd, services: noSessionServices });
    expect(plain.sections.map((section) => section.name)).toEqual(['base', 'environment']);
    expect(plain.contextFiles).toEqual([]);
    expect(plain.compactInstructions).toBeUndefined();

    const replaced = await builder({ basePrompt: 'Option base.' }).build({ cwd, services: noSessionServices, basePrompt: 'Request base.', appendSystemPrompt: 'Tail.' });
    expect(replaced.prompt.startsWith('Request base.\n\n## Environment')).toBe(true);
    expect(replaced.prompt.endsWith('\n\nTail.')).toBe(true);
    const fromOption = await builder({ basePrompt: 'Option base.' }).build({ cwd, services: noSessionServices });
    expect(fromOption.prompt.startsWith('Option base.\n\n')).toBe(true);
    const noBase = await builder({ basePrompt: '' }).build({ cwd, services: noSessionServices });
    expect(noBase.sections[0]!.name).toBe('environment');
  });

  it("a session started in a sub-folder of a repository reads the repository's memory and tasks; a nearer memory wins; nothing above the repository is read", async () => {
    git('init', '-q');
    write('.tessera/memory/MEMORY.md', '- [fact] build: root memory\n');
    write('.agents/tasks/t1.md', '# Root task\n\n- **Status**: in progress\n');
    write('packages/app/src/.keep', '');
    const sub = join(cwd, 'packages', 'app');
    const fromSub = await builder().build({ cwd: sub, services: noSessionServices });
    expect(fromSub.prompt).toContain('root memory');
    expect(fromSub.prompt).toContain('### Root task');

    write('packages/app/.tessera/memory/MEMORY.md', '- [fact] build: package memory\n');
    const nearer = await builder().build({ cwd: join(sub, 'src'), services: noSessionServices });
    expect(nearer.prompt).toContain('package memory');
    expect(nearer.prompt).not.toContain('root memory');

    // A folder above the repository is not the project's: its memory is not read.
    const inner = join(cwd, 'vendor', 'inner');
    mkdirSync(inner, { recursive: true });
    execFileSync('git', ['-C', inner, 'init', '-q']);
    const outside = await builder().build({ cwd: inner, services: noSessionServices });
    expect(outside.prompt).not.toContain('root memory');
    expect(outside.prompt).not.toContain('Root task');
  });

  it('names the project kind from its marker files: the package and the repository root; TypeScript from tsconfig or the dependency; off with projectKind: false', async () => {
    expect(detectProjectKind(cwd)).toBeUndefined();
    git('init', '-q');
    write('package.json', JSON.stringify({ name: 'root', devDependencies: { typescript: '^5' } }));
    write('package-lock.json', '{}');
    write('crates/engine/Cargo.toml', '[package]\nname = "engine"\n');
    write('crates/engine/uv.lock', '');
    expect(detectProjectKind(cwd)).toEqual({ languages: ['TypeScript'], tools: ['npm'] });
    // A session in a package sees the package's markers first, then the repository's.
    expect(detectProjectKind(join(cwd, 'crates', 'engine'))).toEqual({ languages: ['Rust', 'Python', 'TypeScript'], tools: ['cargo', 'uv', 'npm'] });
    const built = await builder().build({ cwd: join(cwd, 'crates', 'engine'), services: noSessionServices });
    expect(built.prompt).toContain('- Project: Rust, Python, TypeScript (cargo, uv, npm)');
    const off = await builder({ projectKind: false }).build({ cwd, services: noSessionServices });
    expect(off.prompt).not.toContain('- Project:');
    // A package.json that does not parse is still a JavaScript project.
    const plain = join(root, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'package.json'), '{ not json');
    expect(detectProjectKind(plain)).toEqual({ languages: ['JavaScript'], tools: [] });
    expect(describeProjectKind({ languages: ['Go'], tools: [] })).toBe('Go');
  });

  it('caps project memory at 200 lines and 25 KB', async () => {
    write('.tessera/memory/MEMORY.md', Array.from({ length: 300 }, (_, index) => `line ${index + 1}`).join('\n'));
    const byLines = await builder().build({ cwd, services: noSessionServices });
    expect(byLines.prompt).toContain('line 200\n\n(Only the start of');
    expect(byLines.prompt).not.toContain('line 201');

    write('.tessera/memory/MEMORY.md', Array.from({ length: 100 }, (_, index) => `${index}:${'x'.repeat(500)}`).join('\n'));
    const byBytes = await builder().build({ cwd, services: noSessionServices });
    const memory = byBytes.prompt.slice(byBytes.prompt.indexOf('## Project Memory'));
    const body = memory.slice('## Project Memory\n\n'.length, memory.indexOf('\n\n(Only the start of'));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(25 * 1024);
    expect(body.split('\n')).toHaveLength(50); // whole lines only: 50 lines of ~503 bytes fit in 25,600
    expect(byBytes.sections.find((section) => section.name === 'project-memory')!.chars).toBeLessThan(26_000);

    const capped = await builder({ memory: { maxLines: 2 } }).build({ cwd, services: noSessionServices });
    expect(capped.prompt).toContain('1:x');
    expect(capped.prompt).not.toContain('2:x');
    const none = await builder({ memory: false }).build({ cwd, services: noSessionServices });
    expect(none.prompt).not.toContain('Project Memory');
  });

  it('reports truncated context files with their sizes and warns through Diagnostics', async () => {
    write('AGENTS.md', 'a'.repeat(100));
    const reports: DiagnosticReport[] = [];
    const services: SessionServices = { ...noSessionServices, getOptional: ((token: symbol) => (token === Diagnostics ? { report: (r: DiagnosticReport) => reports.push(r) } : undefined)) as SessionServices['getOptional'] };
    const result = await builder({ contextFiles: { maxFileChars: 10 } }).build({ cwd, services });
    expect(result.contextFiles).toHaveLength(1);
    expect(result.contextFiles[0]).toMatchObject({ path: join(cwd, 'AGENTS.md'), truncated: true });
    expect(result.contextFiles[0]!.bytes).toBeLessThan(300);
    expect(reports).toEqual([expect.objectContaining({ severity: 'warning', code: 'TESSERA_CONTEXT_FILE', file: join(cwd, 'AGENTS.md') })]);
  });

  it('skips a failing skill source and reports it', async () => {
    const reports: DiagnosticReport[] = [];
    const services = await servicesWith({
      plugins: [
        skills('broken', () => {
          throw new Error('disk gone');
        }),
        skills('ok', () => [skillEntry('fine', 'Works.')]),
        definePlugin({ name: 'diagnostics', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => reports.push(report) }) }),
      ],
    });
    const result = await builder().build({ cwd, services });
    expect(result.prompt).toContain('## Skills\n\n- fine: Works.');
    expect(reports).toEqual([expect.objectContaining({ code: 'TESSERA_SKILL_SOURCE', message: expect.stringContaining('"broken"') })]);
  });

  it('takes the date from the session Clock when no `now` option is given', async () => {
    const { FakeClock } = await import('@tessera/kernel/testing');
    const services = await servicesWith({ clock: new FakeClock(Date.UTC(2030, 0, 2, 12)) });
    const result = await new DefaultSystemPromptBuilder({ home, git: false }).build({ cwd, services });
    expect(result.prompt).toContain('- Date: 2030-01-02');
  });
});

describe('git in the environment section', () => {
  it('shows the branch and a dirty summary in a real repository, and selects tasks on that branch', async () => {
    git('init', '-q', '-b', 'feat/prompt');
    write('.agents/tasks/a.md', '# Other\n\n- **Status**: in progress\n');
    write('.agents/tasks/b.md', '# Mine\n\n- **Status**: todo\n- **Branch**: feat/prompt\n');
    const unborn = await builder({ git: {}, tasks: { maxTasks: 1 } }).build({ cwd, services: noSessionServices });
    expect(unborn.prompt).toContain('- Git branch: feat/prompt\n- Git status: 1 untracked');
    expect(unborn.prompt).toContain('### Mine');
    expect(unborn.prompt).not.toContain('### Other');

    git('add', '.');
    git('-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '-q', '-m', 'init');
    const clean = await builder({ git: {} }).build({ cwd, services: noSessionServices });
    expect(clean.prompt).toContain('- Git branch: feat/prompt\n- Git status: clean');

    write('.agents/tasks/a.md', '# Other, edited\n');
    write('new.txt', 'x');
    const dirty = await builder({ git: { timeoutMs: 5_000 } }).build({ cwd, services: noSessionServices });
    expect(dirty.prompt).toContain('- Git status: 1 changed, 1 untracked');
    // Deterministic with git on too: the same repository state gives the same bytes.
    expect((await builder({ git: {} }).build({ cwd, services: noSessionServices })).prompt).toBe(dirty.prompt);

    // A folder inside the repository finds it above itself.
    write('deep/er/file.txt', 'x');
    const nested = await builder({ git: {} }).build({ cwd: join(cwd, 'deep', 'er'), services: noSessionServices });
    expect(nested.prompt).toContain('- Git branch: feat/prompt');
  });

  it('leaves git out when cwd is not a repository', async () => {
    // The ceiling keeps git from finding a repository above the temp folder.
    const previous = process.env.GIT_CEILING_DIRECTORIES;
    process.env.GIT_CEILING_DIRECTORIES = root;
    const result = await builder({ git: {} })
      .build({ cwd, services: noSessionServices })
      .finally(() => (previous === undefined ? delete process.env.GIT_CEILING_DIRECTORIES : (process.env.GIT_CEILING_DIRECTORIES = previous)));
    expect(result.prompt.endsWith('- Date: 2025-06-15')).toBe(true);
    expect(result.prompt).not.toContain('Git');
  });
});

describe('systemPrompt plugin', () => {
  it('provides one DefaultSystemPromptBuilder per kernel', async () => {
    const plugin = systemPrompt({ git: false });
    const a = await createKernel({ plugins: testPreset({ plugins: [plugin] }) });
    const b = await createKernel({ plugins: testPreset({ plugins: [plugin] }) });
    kernels.push(a, b);
    expect(a.get(SystemPromptBuilder)).toBeInstanceOf(DefaultSystemPromptBuilder);
    expect(a.get(SystemPromptBuilder)).toBe(a.get(SystemPromptBuilder));
    expect(a.get(SystemPromptBuilder)).not.toBe(b.get(SystemPromptBuilder));
    const result = await a.get(SystemPromptBuilder).build({ cwd, services: a.createSession().services });
    expect(result.sections[0]!.name).toBe('base');
  });

  it('rejects bad options when the plugin is made', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ memory: { maxLines: 0 } }, /memory\.maxLines must be a positive integer/],
      [{ git: { timeoutMs: -1 } }, /git\.timeoutMs/],
      [{ tasks: 'all' }, /tasks must be false or an object/],
      [{ now: 5 }, /now must be a function/],
      [{ basePrompt: 1 }, /basePrompt must be a string/],
      [{ contextFiles: { maxImportDepth: -1 } }, /contextFiles\.maxImportDepth/],
      [{ skills: 'yes' }, /skills must be true or false/],
    ];
    for (const [options, message] of bad) {
      expect(() => systemPrompt(options as SystemPromptOptions)).toThrow(expect.objectContaining({ code: 'invalid_plugin_options', message: expect.stringMatching(message) }));
    }
  });

  it("shows the settings' response language in the environment section, and nothing without one", async () => {
    const services = await servicesWith({ plugins: [], unlisted: true } as never);
    const korean = await new DefaultSystemPromptBuilder({ git: false, now: () => Date.UTC(2026, 0, 2), language: 'Korean' }).build({ cwd, services });
    expect(korean.prompt).toContain('- Response language: Korean');
    const none = await new DefaultSystemPromptBuilder({ git: false, now: () => Date.UTC(2026, 0, 2) }).build({ cwd, services });
    expect(none.prompt).not.toContain('Response language');
  });

  it('lists skills only when a skills command is model-invocable, agents only when a module asks for the agent executor', async () => {
    const builder = new DefaultSystemPromptBuilder({ git: false, now: () => Date.UTC(2026, 0, 2) });
    const services = await servicesWith({ plugins: [skills('folder', () => [skillEntry('lint', 'Runs the linter.')]), agents], unlisted: true } as never);
    const built = await builder.build({ cwd, services });
    expect(built.sections.map((section) => section.name)).not.toContain('skills');
    expect(built.sections.map((section) => section.name)).not.toContain('agents');
    const always = await new DefaultSystemPromptBuilder({ git: false, skills: true, agents: true, now: () => Date.UTC(2026, 0, 2) }).build({ cwd, services });
    expect(always.sections.map((section) => section.name)).toEqual(expect.arrayContaining(['skills', 'agents']));
  });
});
