import { compileRule, EDIT_TOOLS, READ_TOOLS, type CompiledRule, type RuleList, type RuleProblem } from './permission-rule.js';
import type { RuleFamily } from './tool-family.js';

/** Permission rules in Claude Code's settings shape. */
export interface PermissionRules {
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  /** Extra working directories (acceptEdits auto-approves edits inside them). */
  additionalDirectories?: readonly string[];
}

/** One list compiled and indexed by tool, and Bash rules by their first word. */
export class CompiledRuleList {
  private readonly byTool = new Map<string, CompiledRule[]>();
  private readonly bashByWord = new Map<string, CompiledRule[]>();
  private readonly bashWild: CompiledRule[] = [];
  private readonly toolPatterns: CompiledRule[] = [];
  readonly problems: RuleProblem[] = [];

  constructor(
    texts: readonly string[],
    readonly list: RuleList,
  ) {
    for (const text of texts) {
      if (typeof text !== 'string') {
        this.problems.push({ rule: String(text), message: `a ${list} rule must be a string, got ${typeof text}` });
        continue;
      }
      const { rule, problem } = compileRule(text, list);
      if (problem) this.problems.push(problem);
      if (rule.kind === 'never') continue;
      if (rule.toolPattern) this.toolPatterns.push(rule);
      else if (rule.kind === 'bash') {
        if (rule.firstWord === undefined) this.bashWild.push(rule);
        else push(this.bashByWord, rule.firstWord, rule);
      } else push(this.byTool, rule.tool, rule);
    }
  }

  /**
   * Rules that name this tool or its family (Read/Edit by name, or the `family` a tool
   * declares: `Read`, `Edit`, bare `Bash`, `WebFetch`), plus tool-name globs that match it.
   * Bash rules with a command pattern are not among them (see `matchBash`).
   */
  rulesFor(toolName: string, family?: RuleFamily): CompiledRule[] {
    const out: CompiledRule[] = [];
    const own = this.byTool.get(toolName);
    if (own) out.push(...own);
    const shared = family ?? (READ_TOOLS.has(toolName) ? 'Read' : EDIT_TOOLS.has(toolName) ? 'Edit' : undefined);
    if (shared && shared !== toolName) {
      // A bare `Write` rule is about Write only; family rules (`Edit`, `Edit(path)`) cover all edit tools.
      for (const rule of this.byTool.get(shared) ?? []) out.push(rule);
    }
    for (const rule of this.toolPatterns) if (rule.toolPattern!.test(toolName)) out.push(rule);
    return out;
  }

  /** The first Bash rule matching one of the forms, indexed by each form's first word. */
  matchBash(forms: readonly string[]): CompiledRule | undefined {
    const ignoreCase = this.list !== 'allow';
    for (const form of forms) {
      const space = form.indexOf(' ');
      const word = space === -1 ? form : form.slice(0, space);
      const bucket = this.bashByWord.get(ignoreCase ? word.toLowerCase() : word);
      if (bucket) for (const rule of bucket) if (rule.regex!.test(form)) return rule;
      for (const rule of this.bashWild) if (rule.regex!.test(form)) return rule;
    }
    return undefined;
  }

  /** Bare rules (`Bash`, `Edit`, and tool globs matching the name) decide without looking at the input. */
  bareRule(toolName: string, family?: RuleFamily): CompiledRule | undefined {
    return this.rulesFor(toolName, family).find((rule) => rule.kind === 'any');
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The three lists compiled together. */
export interface CompiledRules {
  deny: CompiledRuleList;
  ask: CompiledRuleList;
  allow: CompiledRuleList;
  additionalDirectories: readonly string[];
  problems: RuleProblem[];
}

interface CacheEntry {
  deny: readonly string[] | undefined;
  ask: readonly string[] | undefined;
  allow: readonly string[] | undefined;
  lengths: string;
  compiled: CompiledRules;
}

const cache = new WeakMap<PermissionRules, CacheEntry>();

/**
 * Compiles rules once per rules object; recompiles when one of its arrays is replaced or
 * changes length, so a caller may keep passing the same object on every check.
 */
export function compileRules(rules: PermissionRules): CompiledRules {
  const lengths = `${rules.deny?.length}:${rules.ask?.length}:${rules.allow?.length}`;
  const hit = cache.get(rules);
  if (hit && hit.deny === rules.deny && hit.ask === rules.ask && hit.allow === rules.allow && hit.lengths === lengths) {
    return hit.compiled;
  }
  const deny = new CompiledRuleList(rules.deny ?? [], 'deny');
  const ask = new CompiledRuleList(rules.ask ?? [], 'ask');
  const allow = new CompiledRuleList(rules.allow ?? [], 'allow');
  const compiled: CompiledRules = {
    deny,
    ask,
    allow,
    additionalDirectories: rules.additionalDirectories ?? [],
    problems: [...deny.problems, ...ask.problems, ...allow.problems],
  };
  cache.set(rules, { deny: rules.deny, ask: rules.ask, allow: rules.allow, lengths, compiled });
  return compiled;
}
