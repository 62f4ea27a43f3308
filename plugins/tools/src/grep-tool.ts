import type { ReadAccess, Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { deniedPathsFor, walkFiles } from './file-walker.js';
import { FILE_TYPES } from './file-types.js';
import { compilePathFilter, type PathFilter } from './glob-pattern.js';
import { requiredLiteral, searchFile, type FileMatches, type GrepOutputMode, type GrepSettings } from './grep-engine.js';
import { IgnoreRules, type SearchFilterOptions } from './ignore-rules.js';
import { errorText, fail, succeed } from './result.js';
import { translateRipgrepPattern, type TranslateOptions } from './regex-syntax.js';
import { resolveSearchRoot } from './search-root.js';
import type { WorkspaceOptions } from './workspace.js';

export interface GrepToolOptions extends WorkspaceOptions, SearchFilterOptions {
  /** Longest synchronous slice of the search before the event loop gets a turn, in ms. Default 10. */
  sliceMs?: number;
  /** Content lines kept before sorting (memory bound). Default 20,000. */
  maxContentLines?: number;
  /** Characters of output sent to the model. Default 30,000. */
  maxOutputChars?: number;
  /** Content lines are cut to this many characters. Default 500. */
  maxColumns?: number;
  /**
   * Read permission rules: files they deny are never opened, so they add no matches, names or
   * counts, as Claude Code applies `Read(…)` deny rules to Grep. A function is asked on every
   * call (the plugin looks up the `ReadAccess` service that way). Default: nothing is denied.
   */
  readAccess?: ReadAccess | (() => ReadAccess | undefined);
}

export interface GrepToolData {
  mode: GrepOutputMode;
  numFiles: number;
  filenames: string[];
  numMatches: number;
  truncated: boolean;
}

export const grepInputSchema = z.object({
  pattern: z.string().min(1).describe('The regular expression pattern to search for in file contents'),
  path: z.string().optional().describe('File or directory to search in. Defaults to the current working directory'),
  glob: z.string().optional().describe('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}")'),
  type: z.string().optional().describe('File type to search (rg --type), e.g. js, py, rust, go, java'),
  output_mode: z.enum(['content', 'files_with_matches', 'count']).optional().describe('"content" shows matching lines, "files_with_matches" (default) file paths, "count" match counts'),
  '-i': z.boolean().optional().describe('Case insensitive search'),
  '-n': z.boolean().optional().describe('Show line numbers in content mode (default true)'),
  '-A': z.number().int().min(0).optional().describe('Lines to show after each match (content mode)'),
  '-B': z.number().int().min(0).optional().describe('Lines to show before each match (content mode)'),
  '-C': z.number().int().min(0).optional().describe('Lines to show before and after each match (content mode)'),
  multiline: z.boolean().optional().describe('Enable multiline mode where . matches newlines and patterns can span lines'),
  head_limit: z.number().int().min(1).optional().describe('Limit output to the first N lines / files / entries'),
});

export type GrepInput = z.infer<typeof grepInputSchema>;

/**
 * JS RegExp from a ripgrep-style pattern (see `translateRipgrepPattern`), with `flags` added.
 * `options.multiline` says the RegExp will run over whole files (Grep's `multiline`), so `\A`
 * and `\z` anchor to the ends of the file rather than of each line.
 */
export function compilePattern(pattern: string, flags: string, options: TranslateOptions = {}): RegExp {
  const translated = translateRipgrepPattern(pattern, options);
  const extra = mergeFlags(flags, translated.flags);
  if (translated.unicode) return new RegExp(translated.source, `${extra}u`);
  try {
    return new RegExp(translated.source, extra);
  } catch (first) {
    try {
      return new RegExp(translated.source, `${extra}u`);
    } catch {
      throw first;
    }
  }
}

/** `flags` plus those of `extra` it lacks: RegExp rejects a flag given twice, as in `(?m)` plus `m`. */
function mergeFlags(flags: string, extra: string): string {
  let merged = flags;
  for (const flag of extra) if (!merged.includes(flag)) merged += flag;
  return merged;
}

/** `regex` again with `extra` flags added (each once). */
function withFlags(regex: RegExp, extra: string): RegExp {
  return new RegExp(regex.source, mergeFlags(regex.flags, extra));
}

function limitOutput(lines: string[], maxChars: number): { text: string; cut: boolean } {
  let length = 0;
  for (let index = 0; index < lines.length; index += 1) {
    length += lines[index]!.length + 1;
    if (length > maxChars) return { text: lines.slice(0, index).join('\n'), cut: true };
  }
  return { text: lines.join('\n'), cut: false };
}

/**
 * Grep: a regex search written in TypeScript with ripgrep's behaviour where Claude Code relies
 * on it: `.gitignore` and heavy folders skipped, binary files skipped, `glob` / `type` filters,
 * three output modes, context lines, multiline mode and `head_limit`. Files are streamed in
 * pieces by a bounded pool, so memory does not grow with file or tree size. Files that Read
 * permission rules deny are skipped before they are opened.
 */
export function grepTool(options: GrepToolOptions = {}): Tool<GrepInput, GrepToolData> {
  const maxContentLines = options.maxContentLines ?? 20_000;
  const maxOutputChars = options.maxOutputChars ?? 30_000;
  return defineTool<GrepInput, GrepToolData>({
    name: 'Grep',
    description:
      'Searches file contents with a regular expression (JavaScript/ripgrep syntax). Filter files with glob (e.g. "*.ts") or type (e.g. "py"). ' +
      'output_mode: "files_with_matches" (default, newest first), "content" (matching lines, with -A/-B/-C context and -n line numbers) or "count". ' +
      'Use multiline for patterns that span lines. Respects .gitignore; skips binary files and folders such as node_modules and .git.',
    inputSchema: grepInputSchema,
    async execute(input, context) {
      const mode: GrepOutputMode = input.output_mode ?? 'files_with_matches';
      const flags = input['-i'] ? 'i' : '';
      let settings: GrepSettings;
      try {
        const line = compilePattern(input.pattern, flags);
        settings = {
          line,
          chunk: withFlags(line, 'm'),
          ...(input.multiline ? { multiline: withFlags(compilePattern(input.pattern, flags, { multiline: true }), 'gms') } : {}),
          mode,
          before: mode === 'content' ? (input['-B'] ?? input['-C'] ?? 0) : 0,
          after: mode === 'content' ? (input['-A'] ?? input['-C'] ?? 0) : 0,
          lineNumbers: input['-n'] ?? true,
          maxColumns: options.maxColumns ?? 500,
          maxMultilineBytes: 32 * 1024 * 1024,
        };
      } catch (error) {
        return fail(`Invalid regular expression ${JSON.stringify(input.pattern)}: ${errorText(error)}. Escape special characters such as ( [ { . * + ?`, 'invalid_pattern');
      }
      let filter: PathFilter | undefined;
      if (input.type) {
        const globs = FILE_TYPES[input.type];
        if (!globs) return fail(`Unknown file type "${input.type}". Known types: ${Object.keys(FILE_TYPES).join(', ')}. Or use glob instead.`, 'invalid_pattern');
        filter = compilePathFilter(`{${globs.join(',')}}`);
      }
      if (input.glob) {
        const byGlob = compilePathFilter(input.glob);
        const byType = filter;
        // Only the glob's exclusions prune directories; type globs name files.
        filter = byType
          ? { matches: (rel, base) => byType.matches(rel, base) && byGlob.matches(rel, base), prunes: (rel, base) => byGlob.prunes?.(rel, base) ?? false }
          : byGlob;
      }

      const root = await resolveSearchRoot(input.path, context.cwd, options);
      if (!root.ok) return fail(root.message, root.code);
      try {
        const found: FileMatches[] = [];
        let keptLines = 0;
        const collect = (match: FileMatches | undefined) => {
          if (!match) return;
          found.push(match);
          keptLines += match.lines.length;
        };
        const required = settings.multiline ? undefined : requiredLiteral(settings.line.source, settings.line.flags);
        const literal = required === undefined ? undefined : Buffer.from(required, 'utf8');
        const search = (path: string) => collect(searchFile(path, settings, Math.max(0, maxContentLines - keptLines), literal));
        const denied = deniedPathsFor(options.readAccess, context);
        // Without deny rules the walk calls `search` directly: no per-file check at all.
        const onFile = denied === undefined ? search : (path: string) => {
          if (!denied(path)) search(path);
        };
        const isFile = (await stat(root.path)).isFile();
        if (isFile) {
          onFile(root.path);
        } else {
          await walkFiles({
            root: root.path,
            rules: IgnoreRules.create(root.path, root.workspaceRoot, options),
            ...(filter ? { filter } : {}),
            signal: context.signal,
            ...(options.sliceMs === undefined ? {} : { sliceMs: options.sliceMs }),
            onFile,
          });
        }
        if (context.signal.aborted) return fail('Search aborted.', 'aborted');
        return format(found, mode, input.head_limit, keptLines >= maxContentLines, maxOutputChars, settings.before + settings.after > 0);
      } catch (error) {
        return fail(`Search failed: ${errorText(error)}`, 'io_error');
      }
    },
  });
}

function format(
  found: FileMatches[],
  mode: GrepOutputMode,
  headLimit: number | undefined,
  capped: boolean,
  maxOutputChars: number,
  withContext: boolean,
) {
  if (mode === 'files_with_matches') found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1));
  else found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const numMatches = found.reduce((sum, file) => sum + file.count, 0);
  const filenames = found.map((file) => file.path);
  let lines: string[];
  let header = '';
  let footer = '';
  if (mode === 'files_with_matches') {
    lines = filenames;
    header = found.length === 0 ? 'No files found' : `Found ${found.length} file${found.length === 1 ? '' : 's'}`;
  } else if (mode === 'count') {
    lines = found.map((file) => `${file.path}:${file.count}`);
    footer = `Found ${numMatches} total occurrence${numMatches === 1 ? '' : 's'} across ${found.length} file${found.length === 1 ? '' : 's'}.`;
  } else {
    // As ripgrep does, groups from different files are separated by "--" when context is shown.
    lines = found.flatMap((file, index) => (withContext && index > 0 ? ['--', ...file.lines] : file.lines));
    if (lines.length === 0) header = 'No matches found';
  }
  let truncated = capped;
  if (headLimit !== undefined && lines.length > headLimit) {
    lines = lines.slice(0, headLimit);
    truncated = true;
  }
  const limited = limitOutput(lines, maxOutputChars);
  truncated ||= limited.cut;
  const parts = [header, limited.text, footer].filter((part) => part.length > 0);
  if (truncated) parts.push('[Results truncated. Narrow the search with path, glob, type or head_limit.]');
  const data: GrepToolData = { mode, numFiles: found.length, filenames, numMatches, truncated };
  return succeed(parts.join('\n'), data);
}
