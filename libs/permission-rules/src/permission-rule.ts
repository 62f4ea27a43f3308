import { parsePathPattern, type PathPattern } from './path-match.js';

export type RuleList = 'deny' | 'ask' | 'allow';

/** Tools whose path rules are `Read(…)`. */
export const READ_TOOLS: ReadonlySet<string> = new Set(['Read', 'Glob', 'Grep', 'LS', 'NotebookRead']);
/** Tools whose path rules are `Edit(…)`; `Write(…)`, `MultiEdit(…)`, `NotebookEdit(…)` count as `Edit(…)`. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);

/** One compiled rule. `kind` says what its specifier is matched against. */
export interface CompiledRule {
  text: string;
  list: RuleList;
  /** Tool name, `Task` normalised to `Agent`; `Read` / `Edit` stand for their tool family. */
  tool: string;
  /** For tool-name globs (`mcp__*`, `*`), matched against the tool name instead of `tool`. */
  toolPattern?: RegExp;
  kind: 'any' | 'bash' | 'path' | 'domain' | 'value' | 'param' | 'never';
  regex?: RegExp;
  /** Bash: the literal first word of the pattern, for indexing; undefined when it has a wildcard. */
  firstWord?: string;
  path?: PathPattern;
  param?: string;
  /**
   * The text between the parentheses, trimmed. A rule naming a tool outside the built-in
   * families is read again with its family's meaning when the tool declares one.
   */
  specifier?: string;
}

export interface RuleProblem {
  rule: string;
  message: string;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `*` matches anything, spaces included; everything else is literal (`?` too). */
export function wildcardRegExp(pattern: string, ignoreCase: boolean, tail = ''): RegExp {
  return new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}${tail}$`, ignoreCase ? 'is' : 's');
}

export function normalizeToolName(name: string): string {
  return name === 'Task' ? 'Agent' : name;
}

function bashRule(rule: CompiledRule, specifier: string): void {
  let body = specifier;
  let tail = '';
  // `Bash(ls *)` and the legacy `Bash(ls:*)` both mean "ls, alone or with arguments".
  if (body.endsWith(':*')) {
    body = body.slice(0, -2);
    tail = '(?: .*)?';
  } else if (body.endsWith(' *')) {
    body = body.slice(0, -2);
    tail = '(?: .*)?';
  }
  body = body.trim().replace(/\s+/g, ' ');
  const ignoreCase = rule.list !== 'allow';
  rule.regex = wildcardRegExp(body, ignoreCase, tail);
  const first = /^([^\s*]+)(?: |$)/.exec(body);
  if (first && body !== '') rule.firstWord = ignoreCase ? first[1]!.toLowerCase() : first[1]!;
}

/**
 * Compiles one rule string. Returns a problem (and a rule that never matches, for allow
 * lists) when the rule cannot be read; a deny or ask rule that cannot be read is kept as a
 * bare-tool rule so that a typo never loosens a deny.
 */
export function compileRule(text: string, list: RuleList): { rule: CompiledRule; problem?: RuleProblem } {
  const trimmed = text.trim();
  const open = trimmed.indexOf('(');
  const name = open === -1 ? trimmed : trimmed.slice(0, open).trim();
  const closed = open === -1 || trimmed.endsWith(')');
  if (name === '' || /[\s()]/.test(name) || !closed) {
    const problem = { rule: text, message: `"${text}" is not a permission rule; write Tool or Tool(specifier) with balanced parentheses.` };
    // An unreadable deny/ask still denies/asks for the whole tool it names.
    return { rule: { text, list, tool: normalizeToolName(name || trimmed), kind: list === 'allow' ? 'never' : 'any' }, problem };
  }
  const tool = normalizeToolName(name);
  const specifier = open === -1 ? undefined : trimmed.slice(open + 1, -1);
  const rule: CompiledRule = { text, list, tool, kind: 'any' };
  const ignoreCase = list !== 'allow';
  if (tool.includes('*')) {
    // Tool-name globs: deny/ask anywhere; allow only after a literal `mcp__server__`.
    if (list === 'allow' && !/^mcp__[^_*]+(?:_[^_*]+)*__/.test(tool)) {
      return {
        rule: { ...rule, kind: 'never' },
        problem: { rule: text, message: `"${text}": a wildcard tool name in an allow rule must start with mcp__<server>__.` },
      };
    }
    rule.toolPattern = wildcardRegExp(tool, false);
  } else if (tool.startsWith('mcp__') && tool.split('__').length === 2) {
    rule.toolPattern = new RegExp(`^${escapeRegExp(tool)}__.+$`, 's');
  }
  if (specifier === undefined || specifier.trim() === '' || specifier.trim() === '*') return { rule };
  const spec = specifier.trim();
  rule.specifier = spec;
  if (tool === 'Bash') {
    rule.kind = 'bash';
    bashRule(rule, spec);
  } else if (READ_TOOLS.has(tool) || EDIT_TOOLS.has(tool)) {
    rule.tool = READ_TOOLS.has(tool) ? 'Read' : 'Edit';
    rule.kind = 'path';
    rule.path = parsePathPattern(spec);
  } else if (tool === 'WebFetch' && spec.startsWith('domain:')) {
    rule.kind = 'domain';
    const domain = spec.slice('domain:'.length).toLowerCase().replace(/\.$/, '');
    rule.regex = domain.startsWith('*.')
      ? new RegExp(`^(?:.+\\.)${list === 'allow' ? '' : '?'}${escapeRegExp(domain.slice(2))}$`, 's')
      : new RegExp(`^${escapeRegExp(domain)}$`, 's');
  } else if (/^[A-Za-z_][\w-]*:/.test(spec) && tool !== 'WebFetch' && tool !== 'Agent' && tool !== 'Skill') {
    rule.kind = 'param';
    rule.param = spec.slice(0, spec.indexOf(':'));
    rule.regex = wildcardRegExp(spec.slice(spec.indexOf(':') + 1), ignoreCase);
  } else {
    rule.kind = 'value';
    rule.regex = wildcardRegExp(spec, ignoreCase);
  }
  return { rule };
}

/** Checks rule strings and says what is wrong with each one that cannot be read. */
export function validatePermissionRules(rules: readonly string[], list: RuleList = 'deny'): RuleProblem[] {
  return rules.flatMap((text) => {
    const { problem } = compileRule(text, list);
    return problem ? [problem] : [];
  });
}
