/**
 * How a reference was written, which decides whether it is one:
 * - `quoted` — `@"my notes.md"` or `@'my notes.md'`: always a reference;
 * - `path` — unquoted and containing `/` or `.` (`@AGENTS.md`, `@./Makefile`, `@docs/spec.md`):
 *   always a reference;
 * - `word` — a bare `@word`: a reference only when a file of that name exists (the resolver
 *   checks), so `@alice` or `@here` in ordinary text is left alone.
 */
export type ReferenceForm = 'quoted' | 'path' | 'word';

export interface ReferenceToken {
  /** As written, including the `@` and any quotes. */
  original: string;
  /** The path inside it (quotes and trailing punctuation removed). */
  path: string;
  form: ReferenceForm;
}

// `@` followed by a quoted path (closed on the same line) or a run of characters that are
// neither white space, quotes nor backticks.
const REFERENCE = /@(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'`]+))/g;
// What may stand right before the `@`: anything else (a letter, a digit, `.`) makes it part
// of a word, as in `a@b.com`.
const OPENER = /[\s([{<"']/;
// Sentence punctuation that follows a reference rather than belonging to it (`see @a.md.`).
const TRAILING_PUNCTUATION = /[.,;:!?)\]}>]+$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const CODE_SPAN = /(`+)[^\n]*?\1/g;

/**
 * The `@` references in `text`, in order, each once per occurrence. Pure: it decides only by
 * shape, never by looking at the disk. Text inside fenced code blocks and inline code spans is
 * skipped, so writing an `@` in backticks is the way to keep it from being read as a file.
 */
export function findReferenceTokens(text: string): ReferenceToken[] {
  const tokens: ReferenceToken[] = [];
  const visible = maskCode(text);
  for (const match of visible.matchAll(REFERENCE)) {
    const start = match.index;
    if (start > 0 && !OPENER.test(visible.charAt(start - 1))) continue;
    const quoted = match[1] ?? match[2];
    if (quoted !== undefined) {
      if (quoted.trim() !== '') tokens.push({ original: match[0], path: quoted, form: 'quoted' });
      continue;
    }
    const raw = match[3] ?? '';
    const path = raw.replace(TRAILING_PUNCTUATION, '');
    if (path === '') continue;
    tokens.push({ original: `@${path}`, path, form: /[./]/.test(path) ? 'path' : 'word' });
  }
  return tokens;
}

/** `text` with fenced code blocks and inline code spans blanked out (same length, so offsets hold). */
export function maskCode(text: string): string {
  let fence: string | undefined;
  return text
    .split('\n')
    .map((line) => {
      const marker = FENCE.exec(line)?.[1];
      if (fence !== undefined) {
        // A fence closes with the same character, at least as long as the one that opened it.
        if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
        return blank(line);
      }
      if (marker !== undefined) {
        fence = marker;
        return blank(line);
      }
      return line.replace(CODE_SPAN, blank);
    })
    .join('\n');
}

function blank(text: string): string {
  return ' '.repeat(text.length);
}
