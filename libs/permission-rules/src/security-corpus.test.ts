import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PermissionMode } from '@tessera/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainPermission } from './evaluate-permission.js';
import { SECURITY_CORPUS, SECURITY_CORPUS_RULES, type SecurityCase } from './security-corpus.js';

const MODES: PermissionMode[] = ['default', 'plan', 'acceptEdits', 'bypassPermissions', 'dontAsk'];
let root: string;
let cwd: string;
let home: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'tessera-corpus-')));
  cwd = join(root, 'project');
  home = join(root, 'home');
  await mkdir(join(cwd, 'src'), { recursive: true });
  await mkdir(join(cwd, 'secrets'), { recursive: true });
  await mkdir(join(home, '.ssh'), { recursive: true });
  await writeFile(join(cwd, '.env'), 'TOKEN=1');
  await writeFile(join(cwd, 'secrets', 'key.pem'), 'key');
  await writeFile(join(cwd, 'src', 'a.ts'), 'export {}');
  await writeFile(join(home, '.ssh', 'id_rsa'), 'key');
  await symlink(join(cwd, 'secrets'), join(cwd, 'link-secrets'));
  await symlink('../.env', join(cwd, 'src', 'link-env'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function materialize(entry: SecurityCase): unknown {
  const fill = (text: string): string => text.replaceAll('${cwd}', cwd).replaceAll('${home}', home);
  if (typeof entry.input === 'string') {
    if (entry.tool === 'Bash') return { command: fill(entry.input) };
    return { file_path: fill(entry.input) };
  }
  return JSON.parse(fill(JSON.stringify(entry.input)));
}

describe('security corpus', () => {
  it('has at least 150 cases with unique ids, covering every category', () => {
    expect(SECURITY_CORPUS.length).toBeGreaterThanOrEqual(150);
    expect(new Set(SECURITY_CORPUS.map((entry) => entry.id)).size).toBe(SECURITY_CORPUS.length);
    const categories = new Set(SECURITY_CORPUS.map((entry) => entry.category));
    for (const category of ['compound', 'substitution', 'wrapper', 'quoting', 'path', 'symlink', 'case', 'file-command', 'write-option', 'web', 'tool']) {
      expect(categories).toContain(category);
    }
  });

  it('allows none of the denied calls, in any mode', () => {
    const leaks: string[] = [];
    for (const entry of SECURITY_CORPUS) {
      const input = materialize(entry);
      for (const mode of MODES) {
        const verdict = explainPermission(entry.tool, input, mode, SECURITY_CORPUS_RULES, { cwd, homeDir: home });
        if (verdict.decision !== 'deny') leaks.push(`${entry.id} [${mode}] ${JSON.stringify(input)} → ${verdict.decision} (${verdict.reason})`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it('still allows the harmless neighbours of the corpus (the rules are not simply deny-all)', () => {
    const ok = (tool: string, input: unknown): string => explainPermission(tool, input, 'default', SECURITY_CORPUS_RULES, { cwd, homeDir: home }).decision;
    expect(ok('Bash', { command: 'echo hi && ls -la' })).toBe('auto');
    expect(ok('Bash', { command: 'git status' })).toBe('auto');
    expect(ok('Read', { file_path: join(cwd, 'src', 'a.ts') })).toBe('auto');
    expect(ok('Edit', { file_path: join(cwd, 'src', 'a.ts') })).toBe('auto');
    expect(ok('WebFetch', { url: 'https://notevil.com/' })).toBe('auto');
    expect(ok('mcp__danger2__x', {})).toBe('approve');
    // Globs, fd duplication and branch switches that cannot reach a denied path stay allowed.
    for (const command of ['cat src/*.ts', 'ls *.json', 'cat src/{a,b}.ts', 'echo hi >&2', 'echo hi 2>&1', 'git checkout main', 'git checkout -b topic', 'find . -name "*.ts"', "echo $'a\\tb'", 'time -p ls']) {
      expect(ok('Bash', { command }), command).toBe('auto');
    }
  });

  it('asks, in every mode, about a path only known when the command runs and a deny rule might name', () => {
    const decide = (command: string, mode: PermissionMode): string =>
      explainPermission('Bash', { command }, mode, SECURITY_CORPUS_RULES, { cwd, homeDir: home }).decision;
    for (const command of ['echo --output=/etc/motd | xargs git diff', 'cat "$F"', 'cat $(cat list)', 'echo x > "$OUT"', 'cat ~-/.env', 'echo x >& "$OUT"', 'cat f{1..1000}']) {
      for (const mode of MODES) expect(decide(command, mode), `${command} [${mode}]`).toBe(mode === 'dontAsk' ? 'deny' : 'approve');
    }
  });
});
