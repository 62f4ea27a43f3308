import type { Diagnostic } from '@tessera/contracts';

/** Collects diagnostics for one file, locating frontmatter keys by their line. */
export class DiagnosticSink {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    readonly file: string,
    private readonly keyLines: Record<string, number> = {},
  ) {}

  report(severity: Diagnostic['severity'], path: string | undefined, message: string, line?: number): void {
    const rootKey = path?.split(/[.[]/)[0];
    const located = line ?? (rootKey !== undefined ? this.keyLines[rootKey] : undefined);
    const diagnostic: Diagnostic = { severity, file: this.file, message };
    if (located !== undefined) diagnostic.line = located;
    if (path !== undefined) diagnostic.path = path;
    this.diagnostics.push(diagnostic);
  }

  error(path: string | undefined, message: string, line?: number): void {
    this.report('error', path, message, line);
  }

  warn(path: string | undefined, message: string, line?: number): void {
    this.report('warning', path, message, line);
  }

  info(path: string | undefined, message: string, line?: number): void {
    this.report('info', path, message, line);
  }
}

const TRUE_WORDS = new Set(['true', 'yes', 'on', '1', 'y']);
const FALSE_WORDS = new Set(['false', 'no', 'off', '0', 'n']);

/**
 * Reads a frontmatter boolean. YAML 1.2 only knows true/false, but Claude Code (v2.1.218)
 * also accepts yes/no/on/off/1/0, and older files rely on that.
 */
export function readBoolean(value: unknown, key: string, sink: DiagnosticSink): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  const word = String(value).trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  sink.warn(key, `\`${key}\` must be a boolean (true/false, yes/no, on/off, 1/0); got ${JSON.stringify(value)}, so the default applies.`);
  return undefined;
}

/** Reads a string field; numbers and booleans are stringified, anything else is reported. */
export function readString(value: unknown, key: string, sink: DiagnosticSink): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null)) {
    // `argument-hint: [file]` or `[file, mode]` is a YAML flow list; the author meant the text.
    return `[${value.map(String).join(', ')}]`;
  }
  sink.warn(key, `\`${key}\` must be a string; got ${describe(value)}, so it is ignored.`);
  return undefined;
}

/**
 * Reads a tool list written as a YAML list, a JSON list in a string, or a comma/space separated
 * string. Separators inside parentheses belong to a rule (`Bash(git add:*)`, `Agent(a, b)`), so
 * splitting is parenthesis-aware.
 */
export function readList(
  value: unknown,
  key: string,
  sink: DiagnosticSink,
  separators: 'comma' | 'comma-or-space' = 'comma-or-space',
): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) {
    const items: string[] = [];
    value.forEach((item, index) => {
      if (typeof item === 'string' || typeof item === 'number') {
        const text = String(item).trim();
        if (text !== '') items.push(text);
      } else sink.warn(`${key}[${index}]`, `\`${key}\` entries must be strings; entry ${index} is ${describe(item)} and is skipped.`);
    });
    return items;
  }
  if (typeof value !== 'string') {
    sink.warn(key, `\`${key}\` must be a list or a comma-separated string; got ${describe(value)}, so it is ignored.`);
    return undefined;
  }
  const text = value.trim();
  if (text.startsWith('[') && text.endsWith(']')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return readList(parsed, key, sink, separators);
    } catch {
      // Not JSON: fall through to splitting, which handles `[a, b]` poorly but never throws.
    }
  }
  return splitOutsideParentheses(text, separators);
}

export function splitOutsideParentheses(text: string, separators: 'comma' | 'comma-or-space'): string[] {
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth += 1;
    else if (char === ')') depth = Math.max(0, depth - 1);
    const separates = depth === 0 && (char === ',' || (separators === 'comma-or-space' && /\s/.test(char)));
    if (separates) {
      if (current.trim() !== '') items.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim() !== '') items.push(current.trim());
  return items;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}
