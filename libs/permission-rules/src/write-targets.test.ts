import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PermissionMode } from '@tessera/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeBashCommand } from './command-forms.js';
import { evaluatePermission } from './evaluate-permission.js';
import type { PermissionRules } from './rule-set.js';
import { writeTargets } from './write-targets.js';

/** What `command` (a single command) writes, through `writeTargets`. */
const targets = (command: string): string[] => {
  const [name = '', ...args] = command.split(' ');
  return writeTargets(name, args);
};

describe('writeTargets', () => {
  it('reads sort -o in every spelling, and not the values of other options', () => {
    for (const command of ['sort -o out x', 'sort -oout x', 'sort --output=out x', 'sort --output out x', 'sort -nro out x', 'sort x -o out', 'sort --out=out x']) {
      expect(targets(command), command).toEqual(['out']);
    }
    expect(targets('sort -t o x')).toEqual([]);
    expect(targets('sort -k 2 -- -o')).toEqual([]);
  });

  it('reads git --output on any subcommand, -o only where it names an output, and git -C', () => {
    expect(targets('git diff --output=d.patch')).toEqual(['d.patch']);
    expect(targets('git log --output log.txt')).toEqual(['log.txt']);
    expect(targets('git -C /etc show --output=motd HEAD')).toEqual(['/etc/motd']);
    expect(targets('git format-patch -o out -1')).toEqual(['out']);
    expect(targets('git format-patch --output-directory=out -1')).toEqual(['out']);
    expect(targets('git archive -o a.tar HEAD')).toEqual(['a.tar']);
    // format-patch writes its patches into the (git -C) directory unless told otherwise.
    expect(targets('git format-patch -1')).toEqual(['.']);
    expect(targets('git -C sub format-patch -1')).toEqual(['sub']);
    expect(targets('git format-patch --stdout -1')).toEqual([]);
    expect(targets('git ls-files -o')).toEqual([]);
    expect(targets('git diff -- --output=x')).toEqual([]);
  });

  it('reads curl and wget downloads, their default directories and their other output files', () => {
    expect(targets('curl -o f http://x')).toEqual(['f']);
    expect(targets('curl -sSLof http://x')).toEqual(['f']);
    expect(targets('curl --output f http://x')).toEqual(['f']);
    expect(targets('curl -O http://x')).toEqual(['.']);
    expect(targets('curl --output-dir d -o f --remote-name http://x')).toEqual(['d/f', 'd']);
    expect(targets('curl -c jar -H -o http://x')).toEqual(['jar']);
    expect(targets('curl http://x')).toEqual([]);
    expect(targets('wget -O f http://x')).toEqual(['f']);
    expect(targets('wget --output-document=f http://x')).toEqual(['f']);
    expect(targets('wget -P d http://x')).toEqual(['d']);
    expect(targets('wget --directory-prefix d http://x')).toEqual(['d']);
    expect(targets('wget -nv http://x')).toEqual(['.']);
    expect(targets('wget -e dir_prefix=/etc http://x')).toEqual(['/etc']);
    expect(targets('wget -qO- http://x')).toEqual(['-']);
    expect(targets('wget --spider http://x')).toEqual([]);
  });

  it('reads tar: the archive when creating, the -C directories (or the cwd) when extracting', () => {
    for (const command of ['tar -xf a.tar -C d', 'tar -C d -xf a.tar', 'tar --directory=d -xf a.tar', 'tar -x --directory d -f a.tar', 'tar xzf a.tgz -C d', 'tar -xzf a.tgz -Cd']) {
      expect(targets(command), command).toEqual(['d']);
    }
    expect(targets('tar -xzf a.tgz')).toEqual(['.']);
    expect(targets('tar -C /a -C b -xf t')).toEqual(['/a', '/a/b']);
    expect(targets('tar -xPf a.tar')).toEqual(['.', '/']);
    expect(targets('tar -cf out.tar -C src .')).toEqual(['out.tar']);
    expect(targets('tar czf out.tgz src')).toEqual(['out.tgz']);
    expect(targets('tar -tf a.tar -C d')).toEqual([]);
    expect(targets('tar -xOf a.tar')).toEqual([]);
  });

  it('reads unzip -d (anywhere, glued too), the cwd without it, and nothing for listings', () => {
    expect(targets('unzip a.zip -d d')).toEqual(['d']);
    expect(targets('unzip -o -d/etc a.zip')).toEqual(['/etc']);
    expect(targets('unzip -q a.zip -x skip -d d')).toEqual(['d']);
    expect(targets('unzip a.zip')).toEqual(['.']);
    expect(targets('unzip -: a.zip')).toEqual(['.', '/']);
    expect(targets('unzip -l a.zip')).toEqual([]);
    expect(targets('unzip -p a.zip')).toEqual([]);
  });

  it('reads destinations: rsync and scp (local only), install, ln, dd of=, cp/mv -t', () => {
    expect(targets('rsync -a -e ssh src/ dest/')).toEqual(['dest/']);
    expect(targets('rsync src/ host:/srv')).toEqual([]);
    expect(targets('rsync host:/srv ./copy')).toEqual(['./copy']);
    expect(targets('rsync --log-file=l -b --backup-dir=bk a d')).toEqual(['d', 'l', 'd/bk']);
    expect(targets('rsync --remove-source-files a b d')).toEqual(['d', 'a', 'b']);
    expect(targets('rsync src')).toEqual([]);
    expect(targets('scp -P 22 -o User=x a b ./dest')).toEqual(['./dest']);
    expect(targets('scp a user@host:/x')).toEqual([]);
    expect(targets('install -m 755 a b')).toEqual(['b']);
    expect(targets('install -D a x/y')).toEqual(['x/y']);
    expect(targets('install -t d a b')).toEqual(['d']);
    expect(targets('install -d d1 d2')).toEqual(['d1', 'd2']);
    expect(targets('ln -s target link')).toEqual(['link']);
    expect(targets('ln a b dir')).toEqual(['dir']);
    expect(targets('ln -s ../lib/x')).toEqual(['x']);
    expect(targets('ln -st d a')).toEqual(['d']);
    expect(targets('dd if=a of=b bs=1M')).toEqual(['b']);
    expect(targets('cp -t d a')).toEqual(['d']);
    expect(targets('cp --target-directory=d a')).toEqual(['d']);
    expect(targets('mv -td a')).toEqual(['d']);
    expect(targets('cp a b')).toEqual([]);
    expect(targets('SORT -o out x')).toEqual(['out']);
  });

  it('reads the work tree git writes: clone, init, worktree add, checkout and restore paths, reset --hard', () => {
    expect(targets('git clone https://x/repo.git')).toEqual(['repo']);
    expect(targets('git clone --depth 1 -b main https://x/repo.git dest')).toEqual(['dest']);
    expect(targets('git -C sub init')).toEqual(['sub']);
    expect(targets('git init --separate-git-dir /g d')).toEqual(['/g', 'd']);
    expect(targets('git worktree add -b topic ../wt main')).toEqual(['../wt']);
    expect(targets('git checkout -- a b')).toEqual(['a', 'b']);
    expect(targets('git checkout HEAD~1 a')).toEqual(['a']);
    expect(targets('git checkout main')).toEqual([]);
    expect(targets('git restore --source HEAD a')).toEqual(['a']);
    // `--staged` alone only resets the index.
    expect(targets('git restore --staged src/a.ts')).toEqual([]);
    expect(targets('git restore -S a')).toEqual([]);
    expect(targets('git restore --staged --worktree a')).toEqual(['a']);
    expect(targets('git restore -SW a')).toEqual(['a']);
    expect(targets('git restore -sS a')).toEqual(['a']);
    expect(targets('git reset --hard')).toEqual(['.']);
    expect(targets('git reset HEAD~1')).toEqual([]);
    expect(targets('git status')).toEqual([]);
  });

  it('reads find -fprint, -fprint0, -fprintf, -fls and the start paths of -delete', () => {
    expect(targets('find . -fprintf out %p')).toEqual(['out']);
    expect(targets('find -L src -name x -fprint0 out -fls log')).toEqual(['out', 'log']);
    expect(targets('find a b -name x -delete')).toEqual(['a', 'b']);
    expect(targets('find -name x -delete')).toEqual(['.']);
    expect(targets('find . -name x -print')).toEqual([]);
  });

  it('is found on every subcommand, behind wrappers and inside shells', () => {
    const found = (command: string): string[] => analyzeBashCommand(command).commands.flatMap((forms) => forms.writeTargets);
    expect(found('echo a && sudo sort -o out x; (tar -xf t -C d) | cat')).toEqual(['out', 'd']);
    expect(found('bash -c "curl -o f http://x"')).toEqual(['f']);
    expect(found('find . -exec sort -o out {} \\;')).toEqual(['out']);
    expect(found('echo x | xargs -I{} timeout 5 /usr/bin/wget -O {} http://x')).toEqual(['{}']);
  });
});

describe('evaluatePermission: files written through options', () => {
  let root: string;
  let cwd: string;
  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'tessera-write-')));
    cwd = join(root, 'project');
    await mkdir(join(cwd, 'src'), { recursive: true });
    await mkdir(join(cwd, 'secrets'), { recursive: true });
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const MODES: PermissionMode[] = ['default', 'plan', 'acceptEdits', 'bypassPermissions', 'dontAsk'];
  const check = (command: string, rules: PermissionRules, mode: PermissionMode = 'default') => evaluatePermission('Bash', { command }, mode, rules, { cwd });

  it('denies a write option an Edit rule denies, in every mode, even when the command is allowed', () => {
    const rules = { allow: ['Bash(sort *)', 'Bash(git *)', 'Bash(curl *)', 'Bash(tar *)', 'Bash(dd *)', 'Bash(ln *)', 'Bash(cd *)'], deny: ['Edit(//etc/**)', 'Edit(./secrets/**)'] };
    const denied = [
      'sort -o /etc/passwd x',
      'sort --output=/etc/passwd x',
      'git diff --output=/etc/motd',
      'git format-patch -o secrets -1',
      'cd secrets && git format-patch -1',
      'curl -o/etc/hosts http://x',
      'curl --output-dir secrets -O http://x',
      'tar -xf a.tar -C/etc',
      'cd secrets && tar -xzf ../a.tgz',
      'dd if=src/a of=/etc/x',
      'ln -s /tmp/x secrets/link',
      'echo ok && (sort -o /etc/passwd x)',
      'echo $(sort -o secrets/x y)',
    ];
    for (const command of denied) for (const mode of MODES) expect(check(command, rules, mode), `${command} [${mode}]`).toBe('deny');
    // Allowed as before when the written file is not denied.
    expect(check('sort -o /tmp/out x', { ...rules, allow: [...rules.allow, 'Edit(//tmp/**)'] })).toBe('auto');
  });

  it('needs an Edit allow next to the Bash allow, as an output redirection does', () => {
    const rules = { allow: ['Bash(sort *)', 'Bash(curl *)', 'Bash(tar *)', 'Edit(./src/**)'] };
    expect(check('sort x', rules)).toBe('auto');
    expect(check('sort -o src/out x', rules)).toBe('auto');
    expect(check('sort -o out x', rules)).toBe('approve');
    expect(check('sort x > out', rules)).toBe('approve');
    expect(check('curl -o /dev/null http://x', rules)).toBe('auto');
    expect(check('curl -o - http://x', rules)).toBe('auto');
    expect(check('tar -xf a.tar -C src/vendor', rules)).toBe('auto');
    expect(check('tar -xf a.tar', rules)).toBe('approve');
    expect(check('tar -tf a.tar', rules)).toBe('auto');
  });

  it('lets acceptEdits run a write option only inside the working directories', () => {
    const rules = { allow: ['Bash(sort *)', 'Bash(tar *)', 'Bash(git *)'] };
    expect(check('sort -o src/out x', rules, 'acceptEdits')).toBe('auto');
    expect(check(`sort -o ${join(root, 'outside')} x`, rules, 'acceptEdits')).toBe('approve');
    expect(check('sort -o /tmp/out x', rules, 'acceptEdits')).toBe('approve');
    expect(check('sort -o .git/hooks/pre-commit x', rules, 'acceptEdits')).toBe('approve');
    expect(check('tar -xf a.tar', rules, 'acceptEdits')).toBe('auto');
    expect(check('tar -xPf a.tar', rules, 'acceptEdits')).toBe('approve');
    expect(check('git -C .. format-patch -1', rules, 'acceptEdits')).toBe('approve');
    // cp and mv run under acceptEdits by themselves: their -t directory must be inside too.
    expect(check('cp --target-directory=/tmp src/a', {}, 'acceptEdits')).toBe('approve');
    expect(check('mv -t/tmp src/a', {}, 'acceptEdits')).toBe('approve');
    expect(check('cp -t src/b src/a', {}, 'acceptEdits')).toBe('auto');
  });

  it('judges local rsync and scp destinations; a remote one is left to the Bash rule', () => {
    const rules = { allow: ['Bash(rsync *)', 'Bash(scp *)', 'Edit(./src/**)'], deny: ['Edit(//etc/**)', 'Read(./secrets/**)'] };
    expect(check('rsync -a src/ /etc/', rules)).toBe('deny');
    expect(check('scp host:/x /etc/x', rules)).toBe('deny');
    expect(check('rsync -a src/ host:/etc/', rules)).toBe('auto');
    expect(check('scp src/a host:/etc/x', rules)).toBe('auto');
    expect(check('rsync secrets/key host:/x', rules)).toBe('deny');
    expect(check('rsync -a src/ ./backup/', rules)).toBe('approve');
  });
});
