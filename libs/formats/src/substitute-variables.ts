/**
 * What `substituteVariables` fills placeholders from. Every field is optional: a placeholder
 * whose value is unknown is handled as the table in docs/plugins/formats.md says.
 */
export interface SkillPromptContext {
  /** The raw argument string typed after the command (`/fix src/a.ts "two words"`). */
  arguments?: string;
  /** Names declared by the `arguments:` frontmatter key, in positional order (`$name`). */
  argumentNames?: readonly string[];
  /**
   * Index of the first argument for `$N`. Default 0, as in Claude Code since v2.1.19
   * (`$0` is the first argument); pass 1 for files written for the older 1-based rule.
   * `$ARGUMENTS[N]` is always 0-based.
   */
  positionalBase?: 0 | 1;
  /** Append `ARGUMENTS: <args>` when the body has no argument placeholder. Default true. */
  appendArgumentsWhenUnused?: boolean;
  sessionId?: string;
  skillDir?: string;
  projectDir?: string;
  pluginRoot?: string;
  pluginData?: string;
  effort?: string;
}

const NAMED_VARIABLES: Record<string, keyof SkillPromptContext> = {
  SESSION_ID: 'sessionId',
  SKILL_DIR: 'skillDir',
  PROJECT_DIR: 'projectDir',
  PLUGIN_ROOT: 'pluginRoot',
  PLUGIN_DATA: 'pluginData',
  EFFORT: 'effort',
};

// One pass, so a substituted value is never rescanned and `\$` protects whatever follows it.
const PLACEHOLDER =
  /\\\$|\$\{(?:CLAUDE|TESSERA)_(SESSION_ID|SKILL_DIR|PROJECT_DIR|PLUGIN_ROOT|PLUGIN_DATA|EFFORT)\}|\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS(?!\w)|\$(\d+)(?!\w)|\$([A-Za-z_]\w*)/g;

/**
 * Replaces skill/command placeholders in `body`:
 * `$ARGUMENTS` (the whole string), `$ARGUMENTS[N]` (0-based word), `$N` (word, base from
 * `positionalBase`), `$name` (declared names only), `\$` (a literal `$`), and
 * `${CLAUDE_*}` / `${TESSERA_*}` for SESSION_ID, SKILL_DIR, PROJECT_DIR, PLUGIN_ROOT,
 * PLUGIN_DATA and EFFORT.
 *
 * Missing values: `$N` / `$ARGUMENTS[N]` beyond the given words stay literal (Claude Code's
 * rule), a declared `$name` without a word becomes empty, an unknown `${…}` stays literal so
 * the shell environment can still expand it, and undeclared `$word`s (`$HOME`) are untouched.
 */
export function substituteVariables(body: string, context: SkillPromptContext = {}): string {
  const raw = context.arguments ?? '';
  const words = splitArguments(raw);
  const base = context.positionalBase ?? 0;
  const names = context.argumentNames ?? [];
  let usedArguments = false;
  const result = body.replace(
    PLACEHOLDER,
    (match, variable: string | undefined, indexed: string | undefined, positional: string | undefined, named: string | undefined) => {
      if (match === '\\$') return '$';
      if (variable !== undefined) {
        const value = context[NAMED_VARIABLES[variable]!];
        return typeof value === 'string' ? value : match;
      }
      if (indexed !== undefined) {
        usedArguments = true;
        return words[Number(indexed)] ?? match;
      }
      if (positional !== undefined) {
        usedArguments = true;
        const index = Number(positional) - base;
        return index >= 0 ? (words[index] ?? match) : match;
      }
      if (named !== undefined) {
        const position = names.indexOf(named);
        if (position === -1) return match;
        usedArguments = true;
        return words[position] ?? '';
      }
      usedArguments = true;
      return raw;
    },
  );
  if (!usedArguments && raw.trim() !== '' && context.appendArgumentsWhenUnused !== false) {
    return `${result}${result.endsWith('\n') ? '' : '\n'}\nARGUMENTS: ${raw}`;
  }
  return result;
}

/**
 * Splits an argument string into words the way a POSIX shell would quote them: whitespace
 * separates, '…' is literal, "…" groups (with \" and \\ escapes), a backslash escapes one
 * character. An unterminated quote runs to the end rather than failing.
 */
export function splitArguments(input: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < input.length; index += 1) {
    const char = input[index]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else current += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '\\' && (input[index + 1] === '"' || input[index + 1] === '\\')) current += input[++index];
      else current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '\\' && index + 1 < input.length) {
      current += input[++index];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}
