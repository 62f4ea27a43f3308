import { basename, extname, resolve } from 'node:path';
import type { AgentDefinition, ParseResult, PermissionMode } from '@tessera/contracts';
import { DiagnosticSink, readList, readString } from './coerce.js';
import { parseFrontmatter } from './frontmatter.js';
import { LOOSE_NAME } from './name-rules.js';
import { readTextFile } from './read-text.js';

/**
 * Names that load without comment: lowercase letters, digits, hyphens, dots and underscores,
 * starting with a letter or digit (`powershell-5.1-expert`, `data_helper`). Claude Code
 * documents lowercase and hyphens but loads these too.
 */
export const AGENT_NAME_PATTERN = LOOSE_NAME;
/** What Claude Code itself refuses: a `:` (reserved for `plugin:agent`) or a leading hyphen. */
const REFUSED_AGENT_NAME = /:|^-|^\s*$/;

/** An agent definition read from a file, with the frontmatter keys it does not interpret. */
export interface AgentFileDefinition extends AgentDefinition {
  /** Every frontmatter key not read into a field (`memory`, `hooks`, unknown keys…), verbatim. */
  extra: Record<string, unknown>;
}

const PERMISSION_MODES: Record<string, PermissionMode> = {
  default: 'default',
  manual: 'default',
  plan: 'plan',
  acceptEdits: 'acceptEdits',
  bypassPermissions: 'bypassPermissions',
  dontAsk: 'dontAsk',
};

/** Documented agent keys Tessera reads into `AgentDefinition`. */
const READ_KEYS = new Set([
  'name', 'description', 'tools', 'disallowedTools', 'model', 'maxTurns', 'permissionMode', 'skills', 'isolation', 'color',
]);
/** Documented Claude Code keys with no `AgentDefinition` field yet: kept in `extra`, reported as info. */
const DOCUMENTED_UNSUPPORTED = new Set(['hooks', 'mcpServers', 'memory', 'background', 'effort', 'initialPrompt']);
/** Skill spellings people carry over into agent files. */
const AGENT_KEY_HINTS: Record<string, string> = { 'allowed-tools': 'tools', 'disallowed-tools': 'disallowedTools' };

export interface ReadAgentOptions {
  /** Where the file was found (`project`, `user`, `plugin:<name>`…). Default `file`. */
  source?: string;
}

/**
 * Reads a subagent definition (`.claude/agents/*.md`): frontmatter fields plus the body as the
 * system prompt. Never throws. A file Claude Code would skip (no `name`, a `name` with `:` or a
 * leading `-`, no `description`, unreadable) still yields a value — named after the file — but
 * carries an `error` diagnostic: callers register only definitions without error diagnostics.
 * A field with a bad value is a warning and is ignored; the agent still loads.
 */
export function readAgentDefinition(path: string, options: ReadAgentOptions | string = {}): ParseResult<AgentFileDefinition> {
  const file = resolve(path);
  const source = typeof options === 'string' ? options : (options.source ?? 'file');
  const text = readTextFile(file);
  if (!text.ok) {
    return { value: fallbackDefinition(file, source), diagnostics: [text.diagnostic] };
  }
  return parseAgentDefinition(text.value, file, source);
}

/** Same as `readAgentDefinition`, for text already in memory (`file` is used in diagnostics). */
export function parseAgentDefinition(text: string, file: string, source = 'file'): ParseResult<AgentFileDefinition> {
  const document = parseFrontmatter(text, file);
  const sink = new DiagnosticSink(file, document.keyLines);
  const data = document.data;
  if (document.hasFrontmatter) sink.diagnostics.push(...document.diagnostics);
  else if (document.diagnostics.length > 0) {
    // The only diagnostic without frontmatter is "never closed": for an agent that means no name.
    sink.error(undefined, 'Agent frontmatter opened with `---` on line 1 is never closed; add a `---` line after the last key (Claude Code skips the agent until then).', 1);
  } else sink.error(undefined, 'Agent file has no `---` frontmatter; add `name:` and `description:` between `---` lines.', 1);

  const value = fallbackDefinition(file, source);
  value.systemPrompt = document.body.trim();

  const name = readString(data.name, 'name', sink);
  if (name === undefined) {
    if (document.hasFrontmatter) sink.error('name', `Agent has no \`name\`; add \`name: ${value.name}\` to the frontmatter (it is skipped until then).`, 2);
  } else if (REFUSED_AGENT_NAME.test(name)) {
    sink.error('name', `Agent name ${JSON.stringify(name)} is refused (Claude Code skips it too): a name may not be empty, contain \`:\` or start with \`-\`. Rename it, e.g. \`${suggestAgentName(name) || value.name}\`.`);
  } else {
    if (!AGENT_NAME_PATTERN.test(name)) {
      sink.warn('name', `Agent name ${JSON.stringify(name)} has characters Claude Code does not document (use lowercase letters, digits, \`-\`, \`.\`, \`_\`); it is loaded as written.`);
    }
    value.name = name;
  }

  const description = readString(data.description, 'description', sink);
  if (description === undefined || description.trim() === '') {
    if (document.hasFrontmatter) sink.error('description', 'Agent has no `description`; add one saying when to use this agent.', 2);
  } else value.description = description.trim();

  const tools = readList(data.tools, 'tools', sink, 'comma');
  if (tools !== undefined) value.tools = tools;
  const disallowed = readList(data.disallowedTools, 'disallowedTools', sink, 'comma');
  if (disallowed !== undefined) value.disallowedTools = disallowed;
  const skills = readList(data.skills, 'skills', sink, 'comma');
  if (skills !== undefined) value.skills = skills;

  const model = readString(data.model, 'model', sink);
  if (model !== undefined && model.trim() !== '') value.model = model.trim();

  readMaxTurns(data.maxTurns, sink, value);
  readPermissionMode(data.permissionMode, sink, value);

  if (data.isolation !== undefined && data.isolation !== null) {
    if (data.isolation === 'worktree') value.isolation = 'worktree';
    else sink.warn('isolation', `\`isolation\` must be \`worktree\`; got ${JSON.stringify(data.isolation)}, so the agent runs without isolation.`);
  }
  const color = readString(data.color, 'color', sink);
  if (color !== undefined) value.color = color;

  for (const [key, raw] of Object.entries(data)) {
    if (READ_KEYS.has(key)) continue;
    value.extra[key] = raw;
    if (DOCUMENTED_UNSUPPORTED.has(key)) {
      sink.info(key, `\`${key}\` is a Claude Code agent key that Tessera does not apply yet; it is kept in \`extra\`.`);
    } else {
      const hint = AGENT_KEY_HINTS[key] === undefined ? '' : ` (agents spell it \`${AGENT_KEY_HINTS[key]}\`)`;
      sink.warn(key, `Unknown agent frontmatter key \`${key}\`${hint}; it is kept in \`extra\` and otherwise ignored.`);
    }
  }
  return { value, diagnostics: sink.diagnostics };
}

function readMaxTurns(raw: unknown, sink: DiagnosticSink, value: AgentDefinition): void {
  if (raw === undefined || raw === null) return;
  const turns = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof turns === 'number' && Number.isInteger(turns) && turns > 0) value.maxTurns = turns;
  else sink.warn('maxTurns', `\`maxTurns\` must be a positive integer; got ${JSON.stringify(raw)}, so it is ignored.`);
}

function readPermissionMode(raw: unknown, sink: DiagnosticSink, value: AgentDefinition): void {
  if (raw === undefined || raw === null) return;
  const mode = typeof raw === 'string' ? PERMISSION_MODES[raw] : undefined;
  if (mode !== undefined) value.permissionMode = mode;
  else {
    sink.warn(
      'permissionMode',
      `\`permissionMode\` ${JSON.stringify(raw)} is not supported and is ignored; use one of ${Object.keys(PERMISSION_MODES).join(', ')}.`,
    );
  }
}

function suggestAgentName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
}

function fallbackDefinition(file: string, source: string): AgentFileDefinition {
  return { name: basename(file, extname(file)), description: '', systemPrompt: '', file, source, extra: {} };
}
