import type { ToolPermission } from '@tessera/contracts';
import { analyzeBashCommand } from './command-forms.js';
import { globMightMatchPattern, globWithRealPrefix, matchesPathPattern, type PathAnchors } from './path-match.js';
import { compileRule, type CompiledRule } from './permission-rule.js';
import { permissionSubject, resolveAnchors, stringsIn, type PermissionSubject } from './permission-subject.js';
import { CompiledRuleList } from './rule-set.js';
import { judgedTool, type JudgedTool, type RuleFamily } from './tool-family.js';

/** Where a rule's paths are anchored, and how the tool is judged when its name is not a built-in one. */
export interface RuleMatchOptions {
  /** `./x` and `x/y` rules, and relative paths in the input. */
  cwd: string;
  /** `/x` rules; default `cwd`. */
  settingsRoot?: string;
  /** `~/x` rules; default `os.homedir()`. */
  homeDir?: string;
  /** The tool's `Tool.permission`: an unknown tool is then also matched by its family's rules. */
  permission?: ToolPermission;
}

const compiledRules = new Map<string, CompiledRuleList>();

function compiled(rule: string): CompiledRuleList {
  let list = compiledRules.get(rule);
  if (!list) {
    list = new CompiledRuleList([rule], 'deny');
    if (compiledRules.size > 1000) compiledRules.clear();
    compiledRules.set(rule, list);
  }
  return list;
}

/**
 * True when `rule` (`Write(src/**)`, `Bash(git *)`, `WebFetch(domain:x.com)`, bare `Read`…)
 * matches this tool call, with the meaning the rule has in a `deny` list here — so a hook's
 * `if` and a permission rule never disagree. `Edit(…)` covers Write, MultiEdit and
 * NotebookEdit; path patterns are anchored at `options` (`./x` and `x/y` at `cwd`, `/x` at
 * `settingsRoot`, default `cwd`, `~/x` at `homeDir`) and tested against the path as given
 * and its real path, case-insensitively; a compound Bash command matches when one of its
 * subcommands does (wrappers and `VAR=` prefixes stripped). With `options.permission`, a
 * tool the rules do not know by name is also matched by its family's rules (`Edit(…)` for an
 * `edit` tool, `Bash(…)` for an `execute` tool…). A rule that cannot be read matches every
 * call of the tool it names, as a deny rule would (check rules with `validatePermissionRules`
 * to report them).
 */
export function matchesPermissionRule(rule: string, toolName: string, input: unknown, options: RuleMatchOptions): boolean {
  const anchors = resolveAnchors(options);
  const tool = judgedTool(toolName, options.permission);
  const subject = permissionSubject(tool, input, anchors);
  return findMatch(compiled(rule), tool, input, subject, anchors) !== undefined;
}

// Per rule and family: the rule's specifier read as the family's rule would read it.
const familyReadings = new WeakMap<CompiledRule, Map<RuleFamily, CompiledRule | null>>();

/**
 * A rule that names a tool outside the built-in families (`mcp__fs__write_file(//etc/**)`),
 * read with its family's meaning (`Edit(//etc/**)`) for a tool that declares that family.
 * Only plain specifiers are read again (and `domain:` for fetchers); `param:value` stays exact.
 */
function familyReading(rule: CompiledRule, family: RuleFamily): CompiledRule | undefined {
  if (rule.specifier === undefined) return undefined;
  if (!(rule.kind === 'value' || (rule.kind === 'param' && family === 'WebFetch' && rule.param === 'domain'))) return undefined;
  let readings = familyReadings.get(rule);
  if (!readings) familyReadings.set(rule, (readings = new Map()));
  let reading = readings.get(family);
  if (reading === undefined) {
    const { rule: read, problem } = compileRule(`${family}(${rule.specifier})`, rule.list);
    reading = problem || read.kind === 'never' || read.kind === 'any' ? null : { ...read, text: rule.text, tool: rule.tool };
    readings.set(family, reading);
  }
  return reading ?? undefined;
}

function matchesAsWritten(rule: CompiledRule, input: unknown, subject: PermissionSubject, anchors: PathAnchors): boolean {
  switch (rule.kind) {
    case 'any':
      return true;
    case 'path':
      // Deny/ask test the path as written and its real path; allow only the real path, so a
      // symlink inside an allowed folder cannot carry an edit outside it.
      if (subject.kind !== 'path' || subject.candidates === undefined) return false;
      return rule.list === 'allow'
        ? matchesPathPattern(rule.path!, subject.candidates.slice(-1), anchors, false)
        : matchesPathPattern(rule.path!, subject.candidates, anchors, true);
    case 'domain':
      return subject.kind === 'domain' && subject.host !== undefined && rule.regex!.test(subject.host);
    case 'value':
      if (subject.kind === 'value') return subject.value !== undefined && rule.regex!.test(subject.value);
      if (subject.kind === 'domain') return rule.regex!.test(subject.url);
      // Unknown tools: a deny/ask specifier matches any string in the input; an allow never does.
      return rule.list !== 'allow' && stringsIn(input).some((text) => rule.regex!.test(text));
    case 'param': {
      const value = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[rule.param!] : undefined;
      return typeof value === 'string' && rule.regex!.test(value);
    }
    default:
      return false;
  }
}

/**
 * Whether one rule from `list.rulesFor(…)` applies to a call that is not a command. For a
 * tool with a declared family, its own rules match as written or with the family's meaning,
 * so reading them again never loosens a deny.
 */
export function matchesRule(rule: CompiledRule, tool: JudgedTool, input: unknown, subject: PermissionSubject, anchors: PathAnchors): boolean {
  if (matchesAsWritten(rule, input, subject, anchors)) return true;
  if (!tool.declared || tool.family === undefined) return false;
  const reading = familyReading(rule, tool.family);
  return reading !== undefined && matchesAsWritten(reading, input, subject, anchors);
}

/**
 * The first rule matching one of a command's forms: `Bash(…)` rules, and for a tool that
 * declares the `execute` family, its own rules read as command patterns.
 */
export function matchCommand(list: CompiledRuleList, tool: JudgedTool, forms: readonly string[]): CompiledRule | undefined {
  const hit = list.matchBash(forms);
  if (hit || !tool.declared) return hit;
  for (const rule of list.rulesFor(tool.name)) {
    const reading = familyReading(rule, 'Bash');
    if (reading?.kind === 'bash' && forms.some((form) => reading.regex!.test(form))) return reading;
  }
  return undefined;
}

/**
 * The first deny/ask rule that applies to the call, for any reading of it. Also the matcher
 * of `matchesPermissionRule`, so a rule means the same wherever it is written.
 */
export function findMatch(list: CompiledRuleList, tool: JudgedTool, input: unknown, subject: PermissionSubject, anchors: PathAnchors): CompiledRule | undefined {
  if (subject.kind === 'bash') {
    const bare = list.bareRule(tool.name, 'Bash');
    if (bare) return bare;
    for (const command of subject.analyzed.commands) {
      const hit = matchCommand(list, tool, command.denyForms);
      if (hit) return hit;
    }
    if (!subject.analyzed.complete) {
      // Unreadable text: also test a crude reading with quotes dropped and every operator a split.
      const pieces = subject.command.replace(/['"\\]/g, '').split(/\$\(|[;&|\n()`<>]/);
      for (const piece of pieces) {
        for (const command of analyzeBashCommand(piece).commands) {
          const hit = matchCommand(list, tool, command.denyForms);
          if (hit) return hit;
        }
      }
    }
    // A declared command runner's own rules also keep their old meaning: any string in the input.
    if (tool.declared) {
      for (const rule of list.rulesFor(tool.name)) if (rule.kind !== 'any' && matchesAsWritten(rule, input, subject, anchors)) return rule;
    }
    const readRules = list.rulesFor('Read').filter((rule) => rule.kind === 'path');
    const editRules = list.rulesFor('Edit').filter((rule) => rule.kind === 'path');
    if (readRules.length === 0 && editRules.length === 0) return undefined;
    const files = subject.files();
    for (const [rules, groups] of [[readRules, files.reads], [editRules, [...files.writes, ...files.outputs]]] as const) {
      for (const rule of rules) for (const candidates of groups) if (matchesPathPattern(rule.path!, candidates, anchors, true)) return rule;
    }
    // A glob (`cat .en?`) matches a rule when one of the paths it may expand to would.
    for (const { access, glob } of files.uncertain) {
      if (glob === undefined) continue;
      // As written and through the real path of its folders (a link into a denied folder).
      const real = globWithRealPrefix(glob);
      for (const rule of access === 'read' ? readRules : editRules) {
        if (globMightMatchPattern(rule.path!, glob, anchors, true) || (real !== glob && globMightMatchPattern(rule.path!, real, anchors, true))) return rule;
      }
    }
    return undefined;
  }
  for (const rule of list.rulesFor(tool.name, tool.family)) if (matchesRule(rule, tool, input, subject, anchors)) return rule;
  return undefined;
}

/**
 * The first Read/Edit path rule of `list` that a Bash command's path of unknown value
 * (`cat "$F"`, `> $(mktemp)`, `xargs git diff`) might name. Such a path cannot be matched, so
 * the caller asks instead of letting it past the rule.
 */
export function uncertainMatch(list: CompiledRuleList, subject: PermissionSubject): CompiledRule | undefined {
  if (subject.kind !== 'bash') return undefined;
  const readRules = list.rulesFor('Read').filter((rule) => rule.kind === 'path');
  const editRules = list.rulesFor('Edit').filter((rule) => rule.kind === 'path');
  if (readRules.length === 0 && editRules.length === 0) return undefined;
  // Keep looking past an unknown read when there are only Edit rules (`cp x "$B"`), and the reverse.
  for (const { access, glob } of subject.files().uncertain) {
    const hit = glob === undefined ? (access === 'read' ? readRules : editRules)[0] : undefined;
    if (hit) return hit;
  }
  return undefined;
}
