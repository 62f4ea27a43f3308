/** Where `needle` occurs in `haystack` (non-overlapping, left to right). */
export function findOccurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  if (needle.length === 0) return found;
  let index = haystack.indexOf(needle);
  while (index !== -1) {
    found.push(index);
    index = haystack.indexOf(needle, index + needle.length);
  }
  return found;
}

/** 1-based line number of a character offset. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line += 1;
  return line;
}

/** The line break most of `content` uses (CRLF only when it outnumbers bare LF). */
export function dominantLineBreak(content: string): '\r\n' | '\n' {
  let crlf = 0;
  let lf = 0;
  for (let index = content.indexOf('\n'); index !== -1; index = content.indexOf('\n', index + 1)) {
    if (index > 0 && content[index - 1] === '\r') crlf += 1;
    else lf += 1;
  }
  return crlf > lf ? '\r\n' : '\n';
}

export interface EditMatch {
  /** Where the (possibly CRLF-converted) old string occurs; empty when it does not. */
  offsets: number[];
  /** The old string as it occurs in the file. */
  oldString: string;
  /** The new string with the line breaks of the text it replaces. */
  newString: string;
}

/**
 * Finds an Edit's `old_string` and fits both strings to the file's line endings. Models write
 * "\n"; in a CRLF file the old string still matches once converted, and the new string's
 * line breaks become "\r\n" so the file does not end up with mixed endings. The replaced
 * text decides (CRLF or LF); with no line break in it, the file's dominant ending does.
 * LF files are left exactly as the model wrote.
 */
export function matchEdit(content: string, oldString: string, newString: string): EditMatch {
  let old = oldString;
  let offsets = old === '' ? [0] : findOccurrences(content, old);
  if (offsets.length === 0 && old.includes('\n') && content.includes('\r\n')) {
    const converted = old.replace(/\r?\n/g, '\r\n');
    const found = findOccurrences(content, converted);
    if (found.length > 0) {
      old = converted;
      offsets = found;
    }
  }
  const lineBreak = old.includes('\r\n') ? '\r\n' : old.includes('\n') ? '\n' : dominantLineBreak(content);
  return { offsets, oldString: old, newString: lineBreak === '\r\n' ? newString.replace(/\r?\n/g, '\r\n') : newString };
}

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  for (let index = 0; index < text.length - 1; index += 1) {
    const gram = text.slice(index, index + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  return grams;
}

/** Sørensen–Dice similarity of two strings over character bigrams, 0…1. */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const left = bigrams(a);
  let overlap = 0;
  for (const [gram, count] of bigrams(b)) {
    const available = left.get(gram) ?? 0;
    if (available > 0) {
      overlap += Math.min(available, count);
      left.set(gram, available - count);
    }
  }
  return (2 * overlap) / (a.length - 1 + (b.length - 1));
}

export interface ClosestMatch {
  line: number;
  text: string;
  /** True when the whole `old_string` matches once whitespace is ignored. */
  whitespaceOnly: boolean;
}

const MAX_LINES_COMPARED = 20_000;

/**
 * A hint for a failed Edit: the file line most like the first non-blank line of
 * `oldString` (similarity ≥ 0.5), or where it matches ignoring whitespace.
 */
export function closestMatch(content: string, oldString: string): ClosestMatch | undefined {
  const squash = (text: string) => text.replace(/\s+/g, '');
  const lines = content.split('\n');
  const wanted = oldString.split('\n').find((line) => line.trim().length > 0)?.trim();
  if (!wanted) return undefined;
  const whole = squash(oldString);
  let best: { line: number; score: number } | undefined;
  const limit = Math.min(lines.length, MAX_LINES_COMPARED);
  for (let index = 0; index < limit; index += 1) {
    const candidate = lines[index]!.trim();
    if (candidate.length === 0) continue;
    const score = similarity(candidate, wanted);
    if (!best || score > best.score) best = { line: index + 1, score };
    if (score === 1) break;
  }
  if (!best || best.score < 0.5) return undefined;
  const from = lines.slice(best.line - 1).join('\n');
  const whitespaceOnly = whole.length > 0 && squash(from).startsWith(whole);
  return { line: best.line, text: lines[best.line - 1]!, whitespaceOnly };
}
