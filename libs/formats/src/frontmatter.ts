import type { Diagnostic } from '@tessera/contracts';
import { isMap, LineCounter, parseDocument, type Document } from 'yaml';

/** A Markdown file split into its YAML frontmatter and body. */
export interface FrontmatterDocument {
  /** Top-level frontmatter keys (empty when the file has none). */
  data: Record<string, unknown>;
  /** Whether a `---` block was present at all. */
  hasFrontmatter: boolean;
  /** The Markdown after the closing `---` (or the whole file without frontmatter). */
  body: string;
  /** 1-based line of the first body line in the file. */
  bodyLine: number;
  /** 1-based file line of each top-level key, for located diagnostics. */
  keyLines: Record<string, number>;
  diagnostics: Diagnostic[];
}

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*$/m;

/**
 * Splits `---` YAML frontmatter from a Markdown body and parses it with the `yaml` package.
 *
 * Real plugin files often carry frontmatter that is not valid YAML (an unquoted
 * `description: Use when: …` or `<example>` blocks). Claude Code skips such files silently;
 * we read them with a line-based `key: value` fallback and say so in a warning, so users see
 * what would break elsewhere without losing the file.
 */
export function parseFrontmatter(text: string, file: string): FrontmatterDocument {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const opening = OPENING.exec(source);
  if (!opening) {
    return { data: {}, hasFrontmatter: false, body: source, bodyLine: 1, keyLines: {}, diagnostics: [] };
  }
  const rest = source.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) {
    return {
      data: {},
      hasFrontmatter: false,
      body: source,
      bodyLine: 1,
      keyLines: {},
      diagnostics: [
        {
          // Claude Code reads such a file as having no frontmatter; so does Tessera. Readers
          // that need frontmatter (agents) report their own error.
          severity: 'warning',
          file,
          line: 1,
          column: 1,
          message: 'Frontmatter opened with `---` on line 1 is never closed, so the file is read as having none; add a `---` line after the last key.',
        },
      ],
    };
  }
  const yamlText = rest.slice(0, closing.index);
  let bodyStart = closing.index + closing[0].length;
  if (rest[bodyStart] === '\r') bodyStart += 1;
  if (rest[bodyStart] === '\n') bodyStart += 1;
  const body = rest.slice(bodyStart);
  // Line 1 is the opening `---`, so YAML line n is file line n + 1.
  const yamlLines = countLines(yamlText);
  const bodyLine = 2 + yamlLines + 1;
  const parsed = parseYaml(yamlText, file);
  return { ...parsed, hasFrontmatter: true, body, bodyLine };
}

function countLines(text: string): number {
  let lines = 0;
  for (let index = 0; index < text.length; index += 1) if (text.charCodeAt(index) === 10) lines += 1;
  return lines;
}

function parseYaml(
  yamlText: string,
  file: string,
): Pick<FrontmatterDocument, 'data' | 'keyLines' | 'diagnostics'> {
  if (yamlText.trim() === '') return { data: {}, keyLines: {}, diagnostics: [] };
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: false });
  if (document.errors.length === 0) {
    const value: unknown = document.toJS();
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return { data: value as Record<string, unknown>, keyLines: keyLinesOf(document, lineCounter), diagnostics: [] };
    }
    return {
      data: {},
      keyLines: {},
      diagnostics: [
        {
          severity: 'warning',
          file,
          line: 2,
          column: 1,
          message: 'Frontmatter must be a YAML mapping of `key: value` lines; this one is a scalar or a list, so it is ignored.',
        },
      ],
    };
  }
  const first = document.errors[0]!;
  const position = lineCounter.linePos(first.pos[0]);
  const fallback = lenientKeyValues(yamlText);
  return {
    data: fallback.data,
    keyLines: fallback.keyLines,
    diagnostics: [
      {
        severity: 'warning',
        file,
        line: position.line + 1,
        column: position.col,
        message:
          `Frontmatter is not valid YAML (${first.code}: ${first.message.split('\n')[0]}); ` +
          'read it line by line as `key: value` instead. Quote values that contain `: ` to make it portable.',
      },
    ],
  };
}

function keyLinesOf(document: Document, lineCounter: LineCounter): Record<string, number> {
  const lines: Record<string, number> = {};
  if (!isMap(document.contents)) return lines;
  for (const pair of document.contents.items) {
    const key = pair.key as { value?: unknown; range?: [number, number, number] } | null;
    if (key && key.range && typeof key.value === 'string') {
      lines[key.value] = lineCounter.linePos(key.range[0]).line + 1;
    }
  }
  return lines;
}

const TOP_LEVEL_KEY = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$/;

/** The fallback reader: top-level `key: value`, indented lines continue the previous value. */
function lenientKeyValues(yamlText: string): { data: Record<string, unknown>; keyLines: Record<string, number> } {
  const data: Record<string, unknown> = {};
  const keyLines: Record<string, number> = {};
  let current: string | undefined;
  const lines = yamlText.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const match = /^\s/.test(line) ? null : TOP_LEVEL_KEY.exec(line);
    if (match) {
      current = match[1]!;
      data[current] = unquote((match[2] ?? '').trim());
      keyLines[current] = index + 2;
    } else if (current !== undefined && line.trim() !== '') {
      const previous = data[current];
      const item = /^\s*-\s+(.*)$/.exec(line);
      if (item && (previous === '' || Array.isArray(previous))) {
        data[current] = [...(Array.isArray(previous) ? previous : []), unquote(item[1]!.trim())];
      } else {
        data[current] = `${String(previous)}${previous === '' ? '' : ' '}${line.trim()}`;
      }
    }
  }
  return { data, keyLines };
}

function unquote(value: string): string {
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]!)) {
    return value.slice(1, -1);
  }
  return value;
}
