import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePermission, explainPermission, type SessionRule } from './evaluate-permission.js';
import { validatePermissionRules } from './permission-rule.js';

let cwd: string;
let root: string;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'tessera-perm-')));
  cwd = join(root, 'project');
  await mkdir(join(cwd, 'src'), { recursive: true });
  await mkdir(join(root, 'outside'), { recursive: true });
  await symlink(join(root, 'outside'), join(cwd, 'src', 'escape'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const bash = (command: string, rules: object, mode: Parameters<typeof evaluatePermission>[2] = 'default') =>
  evaluatePermission('Bash', { command }, mode, rules, { cwd });

describe('evaluatePermission: Bash rules', () => {
  it('matches exactly, with * anywhere, and the word boundary of a trailing " *"', () => {
    expect(bash('npm run build', { allow: ['Bash(npm run build)'] })).toBe('auto');
    expect(bash('npm run build:prod', { allow: ['Bash(npm run build)'] })).toBe('approve');
    expect(bash('ls -la', { allow: ['Bash(ls *)'] })).toBe('auto');
    expect(bash('ls', { allow: ['Bash(ls *)'] })).toBe('auto');
    expect(bash('lsof', { allow: ['Bash(ls *)'] })).toBe('approve');
    expect(bash('lsof', { allow: ['Bash(ls*)'] })).toBe('auto');
    expect(bash('pnpm --filter web build', { allow: ['Bash(pnpm --filter * build)'] })).toBe('auto');
  });

  it('treats the legacy trailing :* as " *"', () => {
    expect(bash('npm test', { allow: ['Bash(npm test:*)'] })).toBe('auto');
    expect(bash('npm test --watch', { allow: ['Bash(npm test:*)'] })).toBe('auto');
    expect(bash('npm testing', { allow: ['Bash(npm test:*)'] })).toBe('approve');
  });

  it('treats ? and other regex characters literally', () => {
    expect(bash('ls a', { allow: ['Bash(ls ?)'] })).toBe('approve');
    expect(bash('ls ?', { allow: ['Bash(ls ?)'] })).toBe('auto');
    expect(bash('echo a.b', { allow: ['Bash(echo a+b)'] })).toBe('approve');
  });

  it('requires every subcommand of a compound command to be allowed', () => {
    const rules = { allow: ['Bash(pnpm *)'] };
    expect(bash('pnpm x && rm -rf /', rules)).toBe('approve');
    expect(bash('pnpm x && pnpm y | pnpm z', rules)).toBe('auto');
    expect(bash('pnpm $(whoami)', rules)).toBe('approve');
  });

  it('strips safe wrappers and VAR= prefixes for allow rules, but not PATH= or LD_PRELOAD=', () => {
    const rules = { allow: ['Bash(npm test)'] };
    expect(bash('timeout 30 npm test', rules)).toBe('auto');
    expect(bash('nice -n 5 nohup time npm test', rules)).toBe('auto');
    expect(bash('NODE_ENV=test CI=1 npm test', rules)).toBe('auto');
    expect(bash('PATH=/tmp/evil npm test', rules)).toBe('approve');
    expect(bash('LD_PRELOAD=/x.so npm test', rules)).toBe('approve');
    expect(bash('sudo npm test', rules)).toBe('approve');
  });

  it('makes output redirection need an Edit permission', () => {
    const rules = { allow: ['Bash(echo *)'] };
    expect(bash('echo hi > /dev/null 2>&1', rules)).toBe('auto');
    expect(bash('echo hi > out.txt', rules)).toBe('approve');
    expect(bash('echo hi > src/out.txt', { allow: ['Bash(echo *)', 'Edit(./src/**)'] })).toBe('auto');
  });

  it('applies deny before ask before allow, in every mode including bypass', () => {
    const rules = { allow: ['Bash(git *)'], ask: ['Bash(git push:*)'], deny: ['Bash(git push --force:*)'] };
    for (const mode of ['default', 'acceptEdits', 'bypassPermissions', 'plan'] as const) {
      expect(bash('git status', rules, mode)).toBe('auto');
      expect(bash('git push origin', rules, mode)).toBe('approve');
      expect(bash('git push --force origin', rules, mode)).toBe('deny');
    }
    expect(bash('git push origin', rules, 'dontAsk')).toBe('deny');
    expect(explainPermission('Bash', { command: 'git push --force' }, 'default', rules, { cwd }).rule).toBe('Bash(git push --force:*)');
  });

  it("resolves a command's relative paths in commandCwd, keeping ./ rules at the cwd", () => {
    const rules = { allow: ['Bash(cat *)', 'Bash(touch *)'], deny: ['Read(./secrets/**)'] };
    const run = (command: string, commandCwd: string, mode: Parameters<typeof evaluatePermission>[2] = 'default') =>
      evaluatePermission('Bash', { command }, mode, rules, { cwd, commandCwd });
    expect(run('cat key.txt', join(cwd, 'secrets'))).toBe('deny');
    expect(run('cat key.txt', 'secrets')).toBe('deny');
    expect(run('cat key.txt', join(cwd, 'src'))).toBe('auto');
    expect(run('cat secrets/key.txt', join(cwd, 'src'))).toBe('auto');
    expect(run('mkdir x', join(root, 'outside'), 'acceptEdits')).toBe('approve');
    expect(run('mkdir x', join(cwd, 'src'), 'acceptEdits')).toBe('auto');
    expect(run('rm -rf ..', join(cwd, 'src'), 'bypassPermissions')).toBe('approve');
    // The directories the shell stands in are critical too (the session cwd's and the shell's parents).
    expect(run('rm -rf ..', join(cwd, 'src', 'a'), 'bypassPermissions')).toBe('approve');
    expect(run('rm -rf build', join(cwd, 'src', 'a'), 'bypassPermissions')).toBe('auto');
  });

  it('follows a cd inside the command: later relative paths are checked in every directory the shell may be in', () => {
    const rules = { allow: ['Bash(cd *)', 'Bash(cat *)', 'Bash(mkdir *)'], deny: ['Read(./secrets/**)'] };
    const run = (command: string, mode: Parameters<typeof evaluatePermission>[2] = 'default') => evaluatePermission('Bash', { command }, mode, rules, { cwd });
    expect(run('cd secrets && cat key.txt')).toBe('deny');
    expect(run('cd src; cd ../secrets; cat key.txt')).toBe('deny');
    expect(run('cd secrets && cat ../README.md')).toBe('auto');
    expect(run('cd src && cat a.ts')).toBe('auto');
    // Where `cd "$D"` or `cd -` leads is unknown before it runs: its later file arguments are never allowed by rule.
    expect(run('cd "$D" && cat key.txt')).toBe('approve');
    expect(run('cd - && cat key.txt')).toBe('approve');
    expect(run('cd "$D" && make')).toBe('approve');
    expect(run('cd "$D" && ls', 'default')).toBe('approve');
    // acceptEdits resolves mkdir arguments where the command starts: after a cd it asks.
    expect(run('cd src && mkdir new', 'acceptEdits')).toBe('auto');
    expect(evaluatePermission('Bash', { command: 'cd src && mkdir new' }, 'acceptEdits', { deny: [] }, { cwd })).toBe('approve');
  });

  it('asks about a later path of unknown value after an unknown read when only Edit rules exist', () => {
    const rules = { allow: ['Bash(cp *)', 'Bash(cat *)'], deny: ['Edit(./.env)', 'Edit(//etc/**)'] };
    for (const mode of ['default', 'bypassPermissions'] as const) {
      expect(bash('cp payload "$B"', rules, mode)).toBe('approve');
      expect(bash('cp "$A" "$B"', rules, mode)).toBe('approve');
      expect(bash('cat "$F" > "$OUT"', rules, mode)).toBe('approve');
    }
    expect(bash('cat "$F"', rules)).toBe('auto');
    expect(bash('cat "$F" > "$OUT"', { allow: ['Bash(cat *)'], deny: ['Read(./.env)'] }, 'bypassPermissions')).toBe('approve');
  });

  it('does not let a leading *, ? or […] of a glob match a dot-file, as bash does not', () => {
    const rules = { allow: ['Bash(ls *)', 'Bash(du *)', 'Bash(cat *)', 'Bash(grep *)'], deny: ['Read(./.env)', 'Read(.env*)'] };
    for (const command of ['ls *', 'du -sh *', 'grep foo *', 'cat src/*.ts', 'cat *.ts', 'cat ?env']) expect(bash(command, rules), command).toBe('auto');
    for (const command of ['cat .en?', 'cat .*', 'cat [.]env', 'cat src/../.e*']) expect(bash(command, rules), command).toBe('deny');
    expect(bash('cat *', { allow: ['Bash(cat *)'], deny: ['Read(./*env)'] })).toBe('deny');
  });

  it('follows a cd inside the command when protecting critical directories from rm', () => {
    expect(bash('cd .. && rm -rf project', {}, 'bypassPermissions')).toBe('approve');
    expect(bash('cd .. && rm -rf other', {}, 'bypassPermissions')).toBe('auto');
    expect(bash('cd / && rm -rf home', {}, 'bypassPermissions')).toBe('auto');
    expect(bash(`cd / && rm -rf ${cwd.split('/').filter(Boolean)[0]}`, {}, 'bypassPermissions')).toBe('approve');
    expect(bash('cd "$D" && rm -rf x', { allow: ['Bash(rm *)', 'Bash(cd *)'] }, 'bypassPermissions')).toBe('approve');
    expect(bash('cd src && rm -rf build', {}, 'bypassPermissions')).toBe('auto');
  });

  it('never auto-approves rm of /, ~, the cwd or its parents', () => {
    expect(bash('rm -rf /', {}, 'bypassPermissions')).toBe('approve');
    expect(bash(`rm -rf ${cwd}`, { allow: ['Bash(rm *)'] })).toBe('approve');
    expect(bash('rm -rf ~', {}, 'bypassPermissions')).toBe('approve');
    expect(bash('rm -rf ..', {}, 'bypassPermissions')).toBe('approve');
    expect(bash('rm -rf build', {}, 'bypassPermissions')).toBe('auto');
  });
});

describe('evaluatePermission: modes', () => {
  it('follows the mode policy when no rule matches', () => {
    const edit = { file_path: join(cwd, 'src', 'a.ts') };
    expect(evaluatePermission('Read', edit, 'plan', {}, { cwd })).toBe('auto');
    expect(evaluatePermission('Edit', edit, 'plan', {}, { cwd })).toBe('deny');
    expect(evaluatePermission('Bash', { command: 'ls' }, 'plan', {}, { cwd })).toBe('deny');
    expect(evaluatePermission('Edit', edit, 'default', {}, { cwd })).toBe('approve');
    expect(evaluatePermission('Edit', edit, 'acceptEdits', {}, { cwd })).toBe('auto');
    expect(evaluatePermission('Bash', { command: 'ls' }, 'acceptEdits', {}, { cwd })).toBe('approve');
    expect(evaluatePermission('Bash', { command: 'mkdir -p src/x && touch src/x/y' }, 'acceptEdits', {}, { cwd })).toBe('auto');
    expect(evaluatePermission('Bash', { command: 'mkdir /tmp/elsewhere' }, 'acceptEdits', {}, { cwd })).toBe('approve');
    expect(evaluatePermission('Edit', edit, 'bypassPermissions', {}, { cwd })).toBe('auto');
    expect(evaluatePermission('Edit', edit, 'dontAsk', {}, { cwd })).toBe('deny');
    expect(evaluatePermission('Edit', edit, 'dontAsk', { allow: ['Edit(src/**)'] }, { cwd })).toBe('auto');
    expect(evaluatePermission('mcp__x__y', {}, 'default', {}, { cwd })).toBe('approve');
    expect(evaluatePermission('mcp__x__y', {}, 'bypassPermissions', {}, { cwd })).toBe('auto');
  });

  it('resolves relative additionalDirectories against the session cwd, as the file tools do', () => {
    const shared = { file_path: join(root, 'shared', 'a.ts') };
    const rules = { additionalDirectories: ['../shared'] };
    expect(evaluatePermission('Edit', shared, 'acceptEdits', rules, { cwd })).toBe('auto');
    expect(evaluatePermission('Edit', { file_path: join(root, 'elsewhere', 'a.ts') }, 'acceptEdits', rules, { cwd })).toBe('approve');
    expect(evaluatePermission('Bash', { command: `touch ${shared.file_path}` }, 'acceptEdits', rules, { cwd })).toBe('auto');
  });

  it('does not let acceptEdits follow a symlink out of the working directory', () => {
    expect(evaluatePermission('Edit', { file_path: join(cwd, 'src', 'escape', 'x') }, 'acceptEdits', {}, { cwd })).toBe('approve');
    expect(evaluatePermission('Edit', { file_path: join(cwd, 'src', 'escape', 'x') }, 'default', { allow: ['Edit(./src/**)'] }, { cwd })).toBe('approve');
  });

  it('always asks before editing protected paths, except in bypass mode', () => {
    const git = { file_path: join(cwd, '.git', 'config') };
    expect(evaluatePermission('Edit', git, 'acceptEdits', {}, { cwd })).toBe('approve');
    expect(evaluatePermission('Edit', git, 'default', { allow: ['Edit'] }, { cwd })).toBe('approve');
    expect(evaluatePermission('Edit', git, 'bypassPermissions', {}, { cwd })).toBe('auto');
    expect(evaluatePermission('Edit', { file_path: join(cwd, '.claude', 'worktrees', 'a') }, 'acceptEdits', {}, { cwd })).toBe('auto');
    // Tessera's own project folder holds permission rules, hooks and checkpoint manifests: never edited unasked.
    for (const file of [join(cwd, '.tessera', 'settings.json'), join(cwd, '.tessera', 'settings.local.json'), join(cwd, '.tessera', 'checkpoints', 's', '9999-x', 'manifest.json'), join(cwd, 'sub', '.tessera', 'commands', 'c.md')]) {
      expect(evaluatePermission('Write', { file_path: file }, 'acceptEdits', {}, { cwd }), file).toBe('approve');
      expect(evaluatePermission('Edit', { file_path: file }, 'default', { allow: ['Edit'] }, { cwd }), file).toBe('approve');
    }
    expect(evaluatePermission('Write', { file_path: join(cwd, '.tesseract', 'x') }, 'acceptEdits', {}, { cwd })).toBe('auto');
  });
});

describe('evaluatePermission: other rule forms', () => {
  it('anchors path rules: //abs, ~/, /settings-root, ./cwd, bare names at any depth', () => {
    const ctx = { cwd: join(cwd, 'src'), settingsRoot: cwd, homeDir: join(root, 'home') };
    const read = (path: string, rule: string) => evaluatePermission('Read', { file_path: path }, 'default', { deny: [rule] }, ctx);
    expect(read('/etc/passwd', 'Read(//etc/**)')).toBe('deny');
    expect(read(join(root, 'home', '.aws', 'credentials'), 'Read(~/.aws/**)')).toBe('deny');
    expect(read(join(cwd, 'config', 'prod.json'), 'Read(/config/**)')).toBe('deny');
    expect(read('/config/prod.json', 'Read(/config/**)')).toBe('auto');
    expect(read(join(cwd, 'src', 'gen', 'x.ts'), 'Read(./gen/**)')).toBe('deny');
    expect(read(join(cwd, 'a', 'b', '.env'), 'Read(.env)')).toBe('deny');
    expect(read(join(cwd, 'a', 'b', 'x.key'), 'Read(*.key)')).toBe('deny');
    expect(read(join(cwd, 'a', 'b', 'x.keys'), 'Read(*.key)')).toBe('auto');
  });

  it('matches relative patterns like Read(.agents/**) against the absolute paths tools send', () => {
    expect(evaluatePermission('Edit', { file_path: join(cwd, '.agents', 'x.md') }, 'default', { allow: ['Edit(.agents/**)'] }, { cwd })).toBe('auto');
  });

  it('anchors dir/** at the cwd: only a bare name (or name/) matches at any depth', () => {
    const edit = (path: string, rule: string) => evaluatePermission('Edit', { file_path: path }, 'default', { allow: [rule] }, { cwd });
    expect(edit(join(cwd, 'src', 'a.ts'), 'Edit(src/**)')).toBe('auto');
    expect(edit(join(cwd, 'lib', 'src', 'a.ts'), 'Edit(src/**)')).toBe('approve');
    expect(edit('/etc/src/passwd', 'Edit(src/**)')).toBe('approve');
    expect(edit(join(cwd, 'lib', 'src', 'a.ts'), 'Edit(src/)')).toBe('auto');
    expect(edit(join(cwd, 'lib', 'src', 'a.ts'), 'Edit(src)')).toBe('auto');
  });

  it('matches WebFetch domains and *. subdomains', () => {
    const rules = { allow: ['WebFetch(domain:github.com)', 'WebFetch(domain:*.example.com)'] };
    const fetch = (url: string) => evaluatePermission('WebFetch', { url }, 'default', rules, { cwd });
    expect(fetch('https://github.com/x')).toBe('auto');
    expect(fetch('https://api.github.com/x')).toBe('approve');
    expect(fetch('https://docs.example.com/')).toBe('auto');
    expect(fetch('https://example.com.evil.io/')).toBe('approve');
    expect(fetch('not a url')).toBe('approve');
  });

  it('matches mcp__server, mcp__server__tool and mcp__server__*', () => {
    expect(evaluatePermission('mcp__fs__read', {}, 'default', { allow: ['mcp__fs'] })).toBe('auto');
    expect(evaluatePermission('mcp__fs__read', {}, 'default', { allow: ['mcp__fs__*'] })).toBe('auto');
    expect(evaluatePermission('mcp__fs__read', {}, 'default', { allow: ['mcp__fs__write'] })).toBe('approve');
    expect(evaluatePermission('mcp__fsx__read', {}, 'default', { allow: ['mcp__fs'] })).toBe('approve');
    expect(evaluatePermission('mcp__fs__read', {}, 'bypassPermissions', { deny: ['mcp__*'] })).toBe('deny');
    expect(evaluatePermission('mcp__fs__read', {}, 'default', { allow: ['mcp__*'] })).toBe('approve');
  });

  it('treats Task(...) as Agent(...)', () => {
    expect(evaluatePermission('Agent', { subagent_type: 'Explore' }, 'default', { deny: ['Task(Explore)'] })).toBe('deny');
    expect(evaluatePermission('Task', { subagent_type: 'Explore' }, 'default', { deny: ['Agent(Explore)'] })).toBe('deny');
    expect(evaluatePermission('Agent', { subagent_type: 'Plan' }, 'default', { deny: ['Agent(Explore)'] })).toBe('auto');
  });

  it('keeps an argument-scoped deny on an unknown tool ahead of a bare allow (CORE-030)', () => {
    const rules = { allow: ['Deploy'], deny: ['Deploy(prod*)'] };
    expect(evaluatePermission('Deploy', { target: 'production' }, 'default', rules)).toBe('deny');
    expect(evaluatePermission('Deploy', { target: 'staging' }, 'default', rules)).toBe('auto');
    expect(evaluatePermission('Deploy', { target: 'prod' }, 'default', { deny: ['Deploy(target:prod)'] })).toBe('deny');
  });

  it('honours exact session rules: the approved subcommand, never the whole tool', () => {
    const session: SessionRule[] = [{ toolName: 'Bash', kind: 'bash', value: 'npm test', text: 'Bash(npm test)' }];
    expect(evaluatePermission('Bash', { command: 'npm test' }, 'default', {}, { cwd, sessionRules: session })).toBe('auto');
    expect(evaluatePermission('Bash', { command: 'npm publish' }, 'default', {}, { cwd, sessionRules: session })).toBe('approve');
    expect(evaluatePermission('Bash', { command: 'npm test' }, 'default', { deny: ['Bash(npm *)'] }, { cwd, sessionRules: session })).toBe('deny');
  });

  it('suggests one exact rule per unapproved subcommand', () => {
    const verdict = explainPermission('Bash', { command: 'npm test && git status && ls' }, 'default', { allow: ['Bash(ls *)'] }, { cwd });
    expect(verdict.decision).toBe('approve');
    expect(verdict.suggestions.map((rule) => rule.text)).toEqual(['Bash(npm test)', 'Bash(git status)']);
  });

  it('reports unreadable rules, keeping an unreadable deny as a deny of the whole tool', () => {
    expect(validatePermissionRules(['Bash(ls', 'Read(./x)', '(x)'])).toHaveLength(2);
    expect(evaluatePermission('Bash', { command: 'ls' }, 'bypassPermissions', { deny: ['Bash(rm -rf'] })).toBe('deny');
    expect(evaluatePermission('Bash', { command: 'ls' }, 'default', { allow: ['Bash(ls'] })).toBe('approve');
  });

  it('picks up rule changes when the same rules object is mutated', () => {
    const rules = { deny: [] as string[] };
    expect(evaluatePermission('Bash', { command: 'ls' }, 'bypassPermissions', rules)).toBe('auto');
    rules.deny.push('Bash(ls)');
    expect(evaluatePermission('Bash', { command: 'ls' }, 'bypassPermissions', rules)).toBe('deny');
  });
});
