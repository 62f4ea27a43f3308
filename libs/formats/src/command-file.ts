import { basename, extname, resolve } from 'node:path';
import type { ParseResult } from '@tessera/contracts';
import { DiagnosticSink } from './coerce.js';
import { parseFrontmatter } from './frontmatter.js';
import { readTextFile } from './read-text.js';
import { firstLine, readPromptFrontmatter, type PromptFrontmatter } from './skill-frontmatter.js';

/** A slash command read from `.claude/commands/**.md` or a plugin's `commands/*.md`. */
export interface CommandDefinition extends PromptFrontmatter {
  /** The file name without `.md`: `/name` invokes it. */
  name: string;
  /** Frontmatter `description`, else the body's first non-empty line, else ''. */
  description: string;
  body: string;
  bodyLine: number;
  file: string;
}

/** Claude Code ignores these in commands (they matter only for skills). */
const OWN_KEYS = new Set(['name', 'paths']);

/**
 * Reads a command file. Frontmatter is optional (many real commands have none); `name` and
 * `paths` are ignored as in Claude Code. Never throws.
 */
export function readCommandFile(path: string): ParseResult<CommandDefinition> {
  const file = resolve(path);
  const name = basename(file, extname(file));
  const text = readTextFile(file);
  if (!text.ok) {
    return {
      value: { name, description: '', body: '', bodyLine: 1, file, disableModelInvocation: false, userInvocable: true, extra: {} },
      diagnostics: [text.diagnostic],
    };
  }
  const document = parseFrontmatter(text.value, file);
  const sink = new DiagnosticSink(file, document.keyLines);
  sink.diagnostics.push(...document.diagnostics);
  const shared = readPromptFrontmatter(document.data, sink, OWN_KEYS, 'command');
  for (const key of OWN_KEYS) {
    if (document.data[key] !== undefined) {
      shared.extra[key] = document.data[key];
      sink.info(key, `\`${key}\` is ignored in command files; the file name is the command name.`);
    }
  }
  return {
    value: {
      ...shared,
      name,
      description: shared.description ?? firstLine(document.body) ?? '',
      body: document.body,
      bodyLine: document.bodyLine,
      file,
    },
    diagnostics: sink.diagnostics,
  };
}
