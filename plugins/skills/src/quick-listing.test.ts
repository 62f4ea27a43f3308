import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readCommandFile, readSkillFile } from '@tessera/formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { corpora } from '../../../test/support/compat-corpus.js';
import { quickListing } from './quick-listing.js';
import { SkillsFixture } from './skills.test-helper.js';

/** What the full readers list for a file, and whether they found anything above info. */
function fullListing(file: string, kind: 'skill' | 'command') {
  const { value, diagnostics } = kind === 'skill' ? readSkillFile(file) : readCommandFile(file);
  const id = 'id' in value ? value.id : value.name;
  return {
    entry: {
      id,
      name: value.name,
      description: value.description,
      source: 'project',
      file: value.file,
      ...(value.argumentHint === undefined ? {} : { argumentHint: value.argumentHint }),
      userInvocable: value.userInvocable,
      modelInvocable: !value.disableModelInvocation,
    },
    clean: diagnostics.every((diagnostic) => diagnostic.severity === 'info'),
  };
}

/** The quick reader answers only where the full reader is clean, and then gives the same entry. */
function expectAgreement(file: string, kind: 'skill' | 'command'): boolean {
  const quick = quickListing(file, readFileSync(file, 'utf8'), kind, 'project');
  if (quick === undefined) return false;
  const full = fullListing(file, kind);
  expect(full.clean, file).toBe(true);
  // A flattened corpus file (`<origin>__SKILL.md`) is not in a skill folder, so only the id differs.
  const flattened = kind === 'skill' && !file.endsWith('/SKILL.md');
  expect(flattened ? { ...quick, id: full.entry.id } : quick, file).toEqual(full.entry);
  return true;
}

describe('quickListing agrees with the full readers', () => {
  for (const corpus of corpora) {
    it(`on every skill and command of the ${corpus.label}`, () => {
      let quick = 0;
      let total = 0;
      const skills = join(corpus.root, 'claude', 'skills');
      for (const name of existsSync(skills) ? readdirSync(skills) : []) {
        const path = join(skills, name);
        const file = statSync(path).isDirectory() ? join(path, 'SKILL.md') : path;
        if (!existsSync(file)) continue;
        total += 1;
        if (expectAgreement(file, 'skill')) quick += 1;
      }
      const commands = join(corpus.root, 'claude', 'commands');
      for (const name of existsSync(commands) ? readdirSync(commands) : []) {
        total += 1;
        if (expectAgreement(join(commands, name), 'command')) quick += 1;
      }
      expect(total).toBeGreaterThan(0);
      expect(quick).toBeLessThanOrEqual(total);
    });
  }

  describe('on edge cases', () => {
    let fixture: SkillsFixture;
    beforeEach(() => {
      fixture = new SkillsFixture();
    });
    afterEach(() => fixture.dispose());

    const cases: Record<string, string> = {
      plain: '---\nname: plain\ndescription: Does one thing, well.\nallowed-tools: Read, Bash(git status:*)\n---\nBody',
      crlfBom: '\uFEFF---\r\nname: crlf\r\ndescription: Windows file\r\nuser-invocable: FALSE\r\n---\r\nBody',
      colon: '---\ndescription: Use when: anything\n---\nBody',
      quoted: '---\ndescription: "Quoted"\n---\nBody',
      number: '---\ndescription: 42\n---\nBody',
      list: '---\ndescription: Lists\nargument-hint: [file]\n---\nBody',
      multiline: '---\ndescription: >\n  Folded\n  text\n---\nBody',
      comment: '---\ndescription: Has # a comment\n---\nBody',
      unknown: '---\ndescription: Unknown key\ntools: Read\n---\nBody',
      badBoolean: '---\ndescription: Bad\ndisable-model-invocation: sometimes\n---\nBody',
      noDescription: '---\nname: bare\n---\nFirst paragraph.',
      upperName: '---\nname: Upper Case\ndescription: Named oddly\n---\nBody',
      agentWithoutFork: '---\ndescription: Agent\nagent: Explore\n---\nBody',
      fork: '---\ndescription: Forks\ncontext: fork\nagent: Explore\n---\nBody',
      unclosed: '---\ndescription: Never closed\nBody',
      noFrontmatter: 'Just a body.',
    };
    for (const [label, text] of Object.entries(cases)) {
      it(label, () => {
        expectAgreement(fixture.write(`.claude/skills/${label}/SKILL.md`, text), 'skill');
        expectAgreement(fixture.write(`.claude/commands/${label}.md`, text), 'command');
      });
    }

    it('reads the plain ones quickly', () => {
      expect(expectAgreement(fixture.write('.claude/skills/plain/SKILL.md', cases.plain!), 'skill')).toBe(true);
      expect(expectAgreement(fixture.write('.claude/skills/crlf/SKILL.md', cases.crlfBom!), 'skill')).toBe(true);
      expect(expectAgreement(fixture.write('.claude/skills/fork/SKILL.md', cases.fork!), 'skill')).toBe(true);
    });
  });
});
