import { DiagnosticSink, readBoolean, readList, readString } from './coerce.js';

/** Frontmatter fields shared by SKILL.md and command files (Claude Code's one shared table). */
export interface PromptFrontmatter {
  description?: string;
  whenToUse?: string;
  /** Always a string: `argument-hint: [file]` parses as a YAML list and is turned back into text. */
  argumentHint?: string;
  /** Names for `$name` placeholders, in positional order (`arguments:`). */
  argumentNames?: string[];
  /** Tools pre-approved for the invoking turn (`allowed-tools`). */
  allowedTools?: string[];
  disallowedTools?: string[];
  /** Default false: when true only the user can invoke it. */
  disableModelInvocation: boolean;
  /** Default true: when false it is hidden from the `/` menu. */
  userInvocable: boolean;
  model?: string;
  effort?: string;
  /** `fork` runs the prompt in an isolated subagent. */
  context?: 'fork';
  /** Agent type for `context: fork`. */
  agent?: string;
  /** Glob patterns limiting when the skill applies. */
  paths?: string[];
  shell?: string;
  /** Raw `hooks:` value; the hooks runner validates and normalises it. */
  hooks?: unknown;
  /** Keys this reader does not interpret (`license`, `version`, `metadata`…), kept verbatim. */
  extra: Record<string, unknown>;
}

const SHARED_KEYS = new Set([
  'description', 'when_to_use', 'argument-hint', 'arguments', 'allowed-tools', 'disallowed-tools',
  'disable-model-invocation', 'user-invocable', 'model', 'effort', 'context', 'agent', 'paths', 'shell', 'hooks',
]);
/** Documented keys that are accepted and ignored by Claude Code itself. */
const IGNORED_KEYS = new Set(['license', 'compatibility', 'metadata', 'background', '$schema']);
/**
 * Undocumented keys common in published files (`version` in 8 of 43 real skills,
 * `hide-from-slash-command-tool` in official plugin commands): info, not warning.
 */
const COMMON_UNDOCUMENTED_KEYS = new Set(['version', 'author', 'tags', 'hide-from-slash-command-tool']);
/** Agent spellings people carry over into skills and commands. */
const KEY_HINTS: Record<string, string> = { tools: 'allowed-tools', allowedTools: 'allowed-tools', disallowedTools: 'disallowed-tools' };

/**
 * Reads the shared frontmatter table. `ownKeys` are keys the caller handles (e.g. `name` for
 * skills); anything else undocumented is kept in `extra` and reported as a warning.
 */
export function readPromptFrontmatter(
  data: Record<string, unknown>,
  sink: DiagnosticSink,
  ownKeys: ReadonlySet<string>,
  kind: 'skill' | 'command',
): PromptFrontmatter {
  const result: PromptFrontmatter = { disableModelInvocation: false, userInvocable: true, extra: {} };
  const description = readString(data.description, 'description', sink);
  if (description !== undefined && description.trim() !== '') result.description = description.trim();
  const whenToUse = readString(data.when_to_use, 'when_to_use', sink);
  if (whenToUse !== undefined) result.whenToUse = whenToUse;
  const hint = readString(data['argument-hint'], 'argument-hint', sink);
  if (hint !== undefined) result.argumentHint = hint;
  const names = readList(data.arguments, 'arguments', sink);
  if (names !== undefined) result.argumentNames = names;
  const allowed = readList(data['allowed-tools'], 'allowed-tools', sink);
  if (allowed !== undefined) result.allowedTools = allowed;
  const disallowed = readList(data['disallowed-tools'], 'disallowed-tools', sink);
  if (disallowed !== undefined) result.disallowedTools = disallowed;
  result.disableModelInvocation = readBoolean(data['disable-model-invocation'], 'disable-model-invocation', sink) ?? false;
  result.userInvocable = readBoolean(data['user-invocable'], 'user-invocable', sink) ?? true;
  const model = readString(data.model, 'model', sink);
  if (model !== undefined && model.trim() !== '') result.model = model.trim();
  const effort = readString(data.effort, 'effort', sink);
  if (effort !== undefined) result.effort = effort;
  if (data.context !== undefined && data.context !== null) {
    if (data.context === 'fork') result.context = 'fork';
    else sink.warn('context', `\`context\` must be \`fork\` (or omitted); got ${JSON.stringify(data.context)}, so the prompt runs inline.`);
  }
  const agent = readString(data.agent, 'agent', sink);
  if (agent !== undefined) {
    result.agent = agent;
    if (result.context !== 'fork') sink.warn('agent', '`agent` only applies with `context: fork`; it is ignored here.');
  }
  const paths = readList(data.paths, 'paths', sink, 'comma');
  if (paths !== undefined) result.paths = paths;
  const shell = readString(data.shell, 'shell', sink);
  if (shell !== undefined) result.shell = shell;
  if (data.hooks !== undefined) result.hooks = data.hooks;

  for (const [key, value] of Object.entries(data)) {
    if (SHARED_KEYS.has(key) || ownKeys.has(key)) continue;
    result.extra[key] = value;
    if (IGNORED_KEYS.has(key)) continue;
    if (COMMON_UNDOCUMENTED_KEYS.has(key)) {
      sink.info(key, `\`${key}\` is not a documented ${kind} frontmatter key, but a common one; it is kept in \`extra\`.`);
      continue;
    }
    const hint = KEY_HINTS[key] === undefined ? '' : ` (did you mean \`${KEY_HINTS[key]}\`?)`;
    sink.warn(key, `\`${key}\` is not a documented ${kind} frontmatter key${hint}; it is kept in \`extra\` and otherwise ignored.`);
  }
  return result;
}

/** The first non-empty paragraph of Markdown, without heading marks, as one line. */
export function firstParagraph(body: string): string | undefined {
  const paragraphs = body.split(/\r?\n\s*\r?\n/);
  for (const paragraph of paragraphs) {
    const text = paragraph
      .split(/\r?\n/)
      .map((line) => line.replace(/^#+\s*/, '').trim())
      .filter((line) => line !== '')
      .join(' ');
    if (text !== '') return text;
  }
  return undefined;
}

/** The first non-empty line of Markdown, without heading marks. */
export function firstLine(body: string): string | undefined {
  for (const line of body.split(/\r?\n/)) {
    const text = line.replace(/^#+\s*/, '').trim();
    if (text !== '') return text;
  }
  return undefined;
}
