import { basename, dirname, extname, resolve } from 'node:path';
import type { ParseResult } from '@tessera/contracts';
import { DiagnosticSink, readString } from './coerce.js';
import { parseFrontmatter } from './frontmatter.js';
import { LOOSE_NAME } from './name-rules.js';
import { readTextFile } from './read-text.js';
import { firstParagraph, readPromptFrontmatter, type PromptFrontmatter } from './skill-frontmatter.js';

/** A skill read from `<dir>/SKILL.md`. */
export interface SkillDefinition extends PromptFrontmatter {
  /** The command name: the skill's directory name (Claude Code ignores `name` for this). */
  id: string;
  /** Display label: frontmatter `name`, or the id. */
  name: string;
  /** Frontmatter `description`, else the body's first paragraph, else ''. */
  description: string;
  /** Markdown after the frontmatter, unprocessed (see `substituteVariables`). */
  body: string;
  /** 1-based file line where `body` starts, for locating `!` commands. */
  bodyLine: number;
  /** Absolute path of SKILL.md. */
  file: string;
  /** Absolute path of the skill directory (`${CLAUDE_SKILL_DIR}`). */
  dir: string;
}

/** agentskills.io name rule: 1–64 of [a-z0-9-], no leading/trailing/double hyphen. */
const PORTABLE_SKILL_NAME = /^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$/;
const OWN_KEYS = new Set(['name']);

/** Reads a SKILL.md. Never throws; bad fields become located diagnostics. */
export function readSkillFile(path: string): ParseResult<SkillDefinition> {
  const file = resolve(path);
  const dir = dirname(file);
  const isSkillMd = basename(file).toLowerCase() === 'skill.md';
  const id = isSkillMd ? basename(dir) : basename(file, extname(file));
  const text = readTextFile(file);
  if (!text.ok) {
    return { value: emptySkill(id, file, dir), diagnostics: [text.diagnostic] };
  }
  const document = parseFrontmatter(text.value, file);
  const sink = new DiagnosticSink(file, document.keyLines);
  sink.diagnostics.push(...document.diagnostics);
  const shared = readPromptFrontmatter(document.data, sink, OWN_KEYS, 'skill');
  const name = readString(document.data.name, 'name', sink);
  if (name !== undefined) checkSkillName(name, isSkillMd ? id : undefined, sink);
  const description = shared.description ?? firstParagraph(document.body) ?? '';
  if (shared.description === undefined) {
    sink.info('description', 'No `description` in frontmatter; the first paragraph of the body is used.', 1);
  } else if (description.length > 1536) {
    sink.warn('description', `Description is ${description.length} characters; Claude Code cuts the skill listing at 1,536, so shorten it.`);
  } else if (description.length > 1024) {
    sink.info('description', `Description is ${description.length} characters; it loads, but Agent Skills uploads allow 1,024.`);
  }
  return {
    value: {
      ...shared,
      id,
      name: name ?? id,
      description,
      body: document.body,
      bodyLine: document.bodyLine,
      file,
      dir,
    },
    diagnostics: sink.diagnostics,
  };
}

/**
 * Claude Code never refuses a skill over its name (it is a display label; the directory names
 * the command), so nothing here is an error. Undocumented characters warn; what only matters for
 * Agent Skills uploads (claude.ai, the API) is info.
 */
function checkSkillName(name: string, directory: string | undefined, sink: DiagnosticSink): void {
  if (!LOOSE_NAME.test(name)) {
    sink.warn('name', `Skill name ${JSON.stringify(name)} has characters Claude Code does not document (use lowercase letters, digits, \`-\`, \`.\`, \`_\`); it is loaded as written.`);
  } else if (!PORTABLE_SKILL_NAME.test(name)) {
    sink.info('name', `Skill name ${JSON.stringify(name)} loads, but Agent Skills uploads (claude.ai, the API) accept only 1–64 lowercase letters, digits and single hyphens.`);
  }
  if (directory !== undefined && name !== directory) {
    sink.info('name', `Skill name ${JSON.stringify(name)} differs from its directory ${JSON.stringify(directory)}; the directory name is the command name, and Agent Skills uploads require the two to match.`);
  }
}

function emptySkill(id: string, file: string, dir: string): SkillDefinition {
  return {
    id, name: id, description: '', body: '', bodyLine: 1, file, dir,
    disableModelInvocation: false, userInvocable: true, extra: {},
  };
}
