import { SkillActivator, SkillSourceContribution } from '@tessera/contracts';
import { PluginOptionsError } from '@tessera/kernel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { skills } from './index.js';
import { SkillsFixture, skillFile } from './skills.test-helper.js';

let fixture: SkillsFixture;
beforeEach(() => {
  fixture = new SkillsFixture();
});
afterEach(() => fixture.dispose());

describe('skills()', () => {
  it('refuses bad options with the option named', () => {
    expect(() => skills({ positionalBase: 2 as 0 })).toThrow(PluginOptionsError);
    expect(() => skills({ shellTimeoutMs: -1 })).toThrow(/shellTimeoutMs must be a positive integer/);
    expect(() => skills({ home: '' })).toThrow(/home/);
  });

  it('declares its wiring and gives each kernel its own source and activator', async () => {
    fixture.write('.claude/skills/one/SKILL.md', skillFile({ description: 'One' }, 'x'));
    const first = await fixture.kernel();
    const second = await fixture.kernel();
    const described = first.describe().plugins.find((plugin) => plugin.name === 'skills')!;
    expect(described).toMatchObject({
      provides: ['SkillActivator'],
      contributes: ['SkillSource'],
      optional: ['Diagnostics', 'PermissionPolicy', 'SubagentLauncher', 'Clock'],
    });
    expect(first.get(SkillActivator)).not.toBe(second.get(SkillActivator));
    expect(first.getAll(SkillSourceContribution)[0]).not.toBe(second.getAll(SkillSourceContribution)[0]);
    expect(await first.get(SkillActivator).list({ sessionId: 's', cwd: fixture.cwd })).toEqual([expect.objectContaining({ id: 'one' })]);
  });
});
