import { utimesSync } from 'node:fs';
import { SkillActivator, SkillSourceContribution, type SkillEntry } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FolderSkillSource } from './folder-skill-source.js';
import { SkillsFixture, skillFile } from './skills.test-helper.js';

let fixture: SkillsFixture;
beforeEach(() => {
  fixture = new SkillsFixture();
});
afterEach(() => fixture.dispose());

const ids = (entries: readonly SkillEntry[]): string[] => entries.map((entry) => entry.id);

async function discovered(): Promise<readonly SkillEntry[]> {
  const kernel = await fixture.kernel();
  const session = kernel.createSession({ cwd: fixture.cwd });
  return session.services.get(SkillActivator).list(session);
}

describe('skills() discovery', () => {
  it('scans the six folders in precedence order and lists command files as skills', async () => {
    fixture.write('~/.claude/skills/h-claude/SKILL.md', skillFile({ description: 'home claude' }, 'x'));
    fixture.write('~/.tessera/skills/h-tessera/SKILL.md', skillFile({ description: 'home tessera' }, 'x'));
    fixture.write('.claude/commands/review.md', 'Review the diff.\n');
    fixture.write('.claude/commands/git/commit.md', skillFile({ description: 'Commit', 'argument-hint': '[message]' }, 'Commit $ARGUMENTS'));
    fixture.write('.claude/skills/p-claude/SKILL.md', skillFile({ description: 'project claude' }, 'x'));
    fixture.write('.agents/skills/p-agents/SKILL.md', skillFile({ description: 'project agents' }, 'x'));
    fixture.write('.tessera/skills/p-tessera/SKILL.md', skillFile({ description: 'project tessera' }, 'x'));
    fixture.write('.tessera/skills/no-skill-file/README.md', 'not a skill');

    const entries = await discovered();
    expect(ids(entries)).toEqual(['p-tessera', 'p-agents', 'p-claude', 'commit', 'review', 'h-tessera', 'h-claude']);
    expect(entries.find((entry) => entry.id === 'commit')).toMatchObject({ description: 'Commit', argumentHint: '[message]', source: 'project' });
    expect(entries.find((entry) => entry.id === 'review')).toMatchObject({ description: 'Review the diff.', modelInvocable: true, userInvocable: true });
    expect(entries.find((entry) => entry.id === 'h-claude')).toMatchObject({ source: 'user', file: `${fixture.home}/.claude/skills/h-claude/SKILL.md` });
  });

  it('keeps the first of two skills with one name and reports both files', async () => {
    const kept = fixture.write('.tessera/skills/deploy/SKILL.md', skillFile({ description: 'tessera deploy' }, 'x'));
    const dropped = fixture.write('.claude/skills/deploy/SKILL.md', skillFile({ description: 'claude deploy' }, 'x'));
    const droppedCommand = fixture.write('.claude/commands/deploy.md', 'command deploy');
    fixture.write('~/.claude/skills/deploy/SKILL.md', skillFile({ description: 'home deploy' }, 'x'));

    const entries = await discovered();
    expect(entries).toEqual([expect.objectContaining({ id: 'deploy', description: 'tessera deploy', file: kept })]);
    const duplicates = fixture.reports.filter((report) => report.code === 'TESSERA_SKILL_DUPLICATE');
    expect(duplicates).toHaveLength(3);
    expect(duplicates[0]).toMatchObject({ severity: 'warning', file: dropped });
    expect(duplicates[0]!.message).toContain(kept);
    expect(duplicates[0]!.message).toContain(dropped);
    expect(duplicates[1]!.file).toBe(droppedCommand);
  });

  it('maps disable-model-invocation and user-invocable', async () => {
    fixture.write('.claude/skills/manual/SKILL.md', skillFile({ description: 'Only by hand', 'disable-model-invocation': 'true' }, 'x'));
    fixture.write('.claude/skills/hidden/SKILL.md', skillFile({ description: 'Model only', 'user-invocable': 'false' }, 'x'));
    const entries = await discovered();
    expect(entries.find((entry) => entry.id === 'manual')).toMatchObject({ modelInvocable: false, userInvocable: true });
    expect(entries.find((entry) => entry.id === 'hidden')).toMatchObject({ modelInvocable: true, userInvocable: false });
  });

  it('keeps a skill with bad frontmatter and reports located warnings', async () => {
    const unclosed = fixture.write('.claude/skills/unclosed/SKILL.md', '---\ndescription: never closed\n\nBody text.\n');
    const wrongType = fixture.write('.claude/skills/typed/SKILL.md', '---\ndescription: Typed\nuser-invocable: sometimes\ntools: Read\n---\nBody\n');
    const entries = await discovered();
    expect(ids(entries)).toEqual(['typed', 'unclosed']);
    const warnings = fixture.reports.filter((report) => report.code === 'TESSERA_SKILL_FILE');
    expect(warnings.every((report) => report.severity === 'warning')).toBe(true);
    expect(warnings.some((report) => report.file === unclosed)).toBe(true);
    const typed = warnings.filter((report) => report.file === wrongType);
    expect(typed.map((report) => report.path).sort()).toEqual(['tools', 'user-invocable']);
    expect(typed.find((report) => report.path === 'user-invocable')!.line).toBe(3);
    // Infos (nothing to fix) are not reported.
    expect(fixture.reports.some((report) => report.severity === 'info')).toBe(false);
  });

  it('follows the home option and scans a folder only once when cwd is home', async () => {
    fixture.write('~/.claude/skills/mine/SKILL.md', skillFile({ description: 'Mine' }, 'x'));
    const kernel = await fixture.kernel();
    const source = kernel.getAll(SkillSourceContribution)[0]!;
    expect(ids(await source.skills({ sessionId: 's', cwd: fixture.home }))).toEqual(['mine']);
    expect(fixture.reports.filter((report) => report.code === 'TESSERA_SKILL_DUPLICATE')).toEqual([]);
  });
});

describe('FolderSkillSource cache and refresh', () => {
  it('scans once per cwd, rescans when a file or folder changes, and tells onChange listeners', async () => {
    const file = fixture.write('.claude/skills/one/SKILL.md', skillFile({ description: 'First' }, 'x'));
    const source = new FolderSkillSource({ home: fixture.home });
    let changes = 0;
    const unsubscribe = source.onChange(() => void (changes += 1));
    const session = { sessionId: 's', cwd: fixture.cwd };

    const first = source.skills(session);
    expect(source.skills(session)).toBe(first);
    expect(changes).toBe(0);

    fixture.write('.claude/skills/one/SKILL.md', skillFile({ description: 'Second, longer' }, 'x'));
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    expect(source.skills(session)[0]!.description).toBe('Second, longer');
    expect(changes).toBe(1);

    fixture.write('.tessera/skills/two/SKILL.md', skillFile({ description: 'New root' }, 'x'));
    expect(ids(source.skills(session))).toEqual(['two', 'one']);
    expect(changes).toBe(2);

    unsubscribe();
    fixture.write('.claude/commands/three.md', 'Three');
    expect(ids(source.skills(session))).toEqual(['two', 'one', 'three']);
    expect(changes).toBe(2);
  });

  it('keeps a separate cache per cwd', async () => {
    fixture.write('.claude/skills/here/SKILL.md', skillFile({ description: 'Here' }, 'x'));
    const source = new FolderSkillSource({ home: fixture.home });
    expect(ids(source.skills({ sessionId: 's', cwd: fixture.cwd }))).toEqual(['here']);
    expect(ids(source.skills({ sessionId: 's', cwd: fixture.root }))).toEqual([]);
  });
});
