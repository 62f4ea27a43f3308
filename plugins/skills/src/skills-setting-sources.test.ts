import { SkillActivator, type SkillEntry } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { skills } from './skills-plugin.js';
import { SkillsFixture, skillFile } from './skills.test-helper.js';

let fixture: SkillsFixture;
beforeEach(() => {
  fixture = new SkillsFixture();
  fixture.write('.claude/skills/p-claude/SKILL.md', skillFile({ description: 'project claude' }, 'x'));
  fixture.write('.tessera/skills/p-tessera/SKILL.md', skillFile({ description: 'project tessera' }, 'x'));
  fixture.write('.claude/commands/review.md', 'Review the diff.\n');
  fixture.write('~/.claude/skills/h-claude/SKILL.md', skillFile({ description: 'home claude' }, 'x'));
});
afterEach(() => fixture.dispose());

async function ids(settingSources?: ReadonlyArray<'user' | 'project' | 'local'>): Promise<string[]> {
  const kernel = await fixture.kernel({ skills: { home: fixture.home, ...(settingSources === undefined ? {} : { settingSources }) } });
  const session = kernel.createSession({ cwd: fixture.cwd });
  const listed: readonly SkillEntry[] = await session.services.get(SkillActivator).list(session);
  return listed.map((entry) => entry.id).sort();
}

describe('skills({ settingSources })', () => {
  it('scans only the folders of the sources named', async () => {
    expect(await ids()).toEqual(['h-claude', 'p-claude', 'p-tessera', 'review']);
    expect(await ids(['user'])).toEqual(['h-claude']);
    expect(await ids(['project', 'local'])).toEqual(['p-claude', 'p-tessera', 'review']);
    expect(await ids(['local'])).toEqual([]);
    expect(await ids([])).toEqual([]);
  });

  it('refuses a source Claude Code does not have', () => {
    expect(() => skills({ settingSources: ['user', 'managed' as never] })).toThrow(/settingSources/);
  });
});
