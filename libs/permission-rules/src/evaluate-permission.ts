import type { PermissionDecision, PermissionMode, PermissionVerdict, ToolPermission } from '@tessera/contracts';
import { copyWith } from '@tessera/contracts';
import { dirname, resolve } from 'node:path';
import { insideDirectories, matchesPathPattern, type PathAnchors } from './path-match.js';
import { permissionSubject, resolveAnchors, type PermissionSubject } from './permission-subject.js';
import { findMatch, matchCommand, matchesRule, uncertainMatch } from './rule-match.js';
import { compileRules, type CompiledRules, type PermissionRules } from './rule-set.js';
import { expandShellPath } from './shell-path.js';
import { judgedTool, SAFE_TOOLS, type JudgedTool } from './tool-family.js';

/**
 * A rule remembered by "allow for session". It is exact — the subcommand, file, domain or
 * agent that was approved — so approving `npm test` never approves another command.
 */
export interface SessionRule {
  toolName: string;
  kind: 'bash' | 'path' | 'domain' | 'value' | 'tool';
  value?: string;
  /** The rule as Claude Code would write it, e.g. `Bash(npm test)`. */
  text: string;
}

export interface PermissionContext {
  /** Working directory: `./x` rules, relative paths, and acceptEdits' reach. Default `process.cwd()`. */
  cwd?: string;
  /** Folder `/x` rules are relative to (the project root holding `.claude/`). Default: `cwd`. */
  settingsRoot?: string;
  homeDir?: string;
  /**
   * Where a Bash command runs when that is not `cwd`: the shell's directory after a `cd` in an
   * earlier call. The command's relative paths resolve here; rules stay anchored as above.
   */
  commandCwd?: string;
  /** Rules approved for this session with "allow for session"; checked with the allow list. */
  sessionRules?: readonly SessionRule[];
  /**
   * The tool's `Tool.permission`. A tool the rules do not know by name is then judged as its
   * family: an `edit` tool by `Edit(…)` rules on `input[subject]` and acceptEdits, an
   * `execute` tool by `Bash(…)` rules on its command, and so on. Ignored for built-in names.
   */
  permission?: ToolPermission;
}

export interface PermissionExplanation extends PermissionVerdict {
  /** For `approve`: the exact rules "allow for session" would remember. */
  suggestions: SessionRule[];
}

const FS_COMMANDS = new Set(['mkdir', 'touch', 'mv', 'cp']);
/**
 * Paths whose edits always need approval outside bypass mode: version control, editor and hook
 * folders, the agents' own settings (`.claude/`, `.tessera/`: permission rules, hooks, commands,
 * checkpoints), shell start-up files and MCP server lists. A model that could edit them
 * unasked could grant itself anything.
 */
const PROTECTED = /(?:^|\/)(?:\.git|\.vscode|\.idea|\.husky|\.tessera)(?:\/|$)|(?:^|\/)\.claude(?:\/(?!worktrees(?:\/|$))|$)|(?:^|\/)(?:\.bashrc|\.bash_profile|\.bash_login|\.bash_logout|\.profile|\.zshrc|\.zprofile|\.zshenv|\.zlogin|\.npmrc|\.mcp\.json|\.gitconfig|\.gitmodules)$/i;

/**
 * `auto` (run), `approve` (ask the user) or `deny`. Order: deny rules, ask rules, allow
 * rules, then the mode. Deny and ask rules apply in every mode, bypassPermissions included.
 */
export function evaluatePermission(
  toolName: string,
  input: unknown,
  mode: PermissionMode,
  rules: PermissionRules,
  context: PermissionContext = {},
): PermissionDecision {
  return explainPermission(toolName, input, mode, rules, context).decision;
}

/** `evaluatePermission` with the deciding rule, a reason, and what "allow for session" would remember. */
export function explainPermission(
  toolName: string,
  input: unknown,
  mode: PermissionMode,
  rules: PermissionRules,
  context: PermissionContext = {},
): PermissionExplanation {
  const compiled = compileRules(rules);
  const anchors = resolveAnchors(context);
  const tool = judgedTool(toolName, context.permission);
  const commandCwd = context.commandCwd === undefined ? undefined : resolve(anchors.cwd, context.commandCwd);
  const subject = permissionSubject(tool, input, anchors, commandCwd);

  const denied = findMatch(compiled.deny, tool, input, subject, anchors);
  if (denied) return { decision: 'deny', rule: denied.text, reason: `${toolName} is denied by the rule ${denied.text}`, suggestions: [] };
  // A path whose value is only known when the command runs may be one a deny rule names:
  // it is asked about, in every mode, like a call an ask rule matches.
  const unsure = uncertainMatch(compiled.deny, subject) ?? uncertainMatch(compiled.ask, subject);
  const asked = findMatch(compiled.ask, tool, input, subject, anchors) ?? unsure;
  const check: AllowCheck = { tool, input, subject, compiled, session: context.sessionRules ?? [], anchors };
  const suggestions = suggest(check);
  if (asked) {
    return mode === 'dontAsk'
      ? { decision: 'deny', rule: asked.text, reason: `${toolName} needs approval (rule ${asked.text}) and the mode is dontAsk`, suggestions: [] }
      : { decision: 'approve', rule: asked.text, reason: `the rule ${asked.text} asks before ${toolName} runs`, suggestions };
  }
  const critical = criticalReason(tool, subject, anchors, mode);
  const unallowed = suggestions.length > 0 || !allowed(check);
  let verdict: PermissionExplanation;
  if (!unallowed) verdict = { decision: 'auto', rule: allowRuleText(check), reason: 'allowed by rule', suggestions: [] };
  else verdict = copyWith(modePolicy(tool, subject, mode, compiled, anchors), { suggestions });
  if (critical && verdict.decision === 'auto') {
    return mode === 'dontAsk'
      ? { decision: 'deny', reason: critical, suggestions: [] }
      : { decision: 'approve', reason: critical, suggestions: [] };
  }
  if (verdict.decision === 'approve' && mode === 'dontAsk') {
    return { decision: 'deny', reason: `${toolName} is not pre-approved and the mode is dontAsk`, suggestions: [] };
  }
  return verdict;
}

function sessionAllows(rules: readonly SessionRule[], tool: string, subject: PermissionSubject, value?: string): boolean {
  for (const rule of rules) {
    if (rule.kind === 'bash') {
      if (subject.kind === 'bash' && rule.value === value) return true;
    } else if (rule.kind === 'path') {
      if (subject.kind === 'path' && rule.toolName === subject.family && subject.candidates?.at(-1) === rule.value) return true;
    } else if (rule.kind === 'tool') {
      if (rule.toolName === tool && subject.kind !== 'bash') return true;
    } else if (rule.toolName === tool) {
      const actual = subject.kind === 'domain' ? subject.host : subject.kind === 'value' ? subject.value : undefined;
      if (actual !== undefined && actual === rule.value) return true;
    }
  }
  return false;
}

interface AllowCheck {
  tool: JudgedTool;
  input: unknown;
  subject: PermissionSubject;
  compiled: CompiledRules;
  session: readonly SessionRule[];
  anchors: PathAnchors;
}

/** The exact rules that would cover what allow rules do not; empty when everything is allowed. */
function suggest(check: AllowCheck): SessionRule[] {
  const { tool, subject, compiled, session } = check;
  if (subject.kind !== 'bash') {
    if (allowed(check)) return [];
    if (subject.kind === 'path' && subject.candidates) {
      const real = subject.candidates.at(-1)!;
      return [{ toolName: subject.family, kind: 'path', value: real, text: `${subject.family}(/${real})` }];
    }
    const name = tool.name;
    if (subject.kind === 'domain' && subject.host) return [{ toolName: name, kind: 'domain', value: subject.host, text: `WebFetch(domain:${subject.host})` }];
    if (subject.kind === 'value' && subject.value) return [{ toolName: name, kind: 'value', value: subject.value, text: `${name}(${subject.value})` }];
    if (subject.kind === 'other') return [{ toolName: name, kind: 'tool', text: name }];
    return [];
  }
  if (compiled.allow.bareRule(tool.name, 'Bash')) return [];
  const out: SessionRule[] = [];
  for (const command of subject.analyzed.commands) {
    if (matchCommand(compiled.allow, tool, [command.allowForm]) || sessionAllows(session, tool.name, subject, command.allowForm)) continue;
    if (!out.some((rule) => rule.value === command.allowForm)) {
      out.push({ toolName: 'Bash', kind: 'bash', value: command.allowForm, text: `Bash(${command.allowForm})` });
    }
  }
  return out;
}

/** True when allow rules (or session rules) cover the whole call. */
function allowed(check: AllowCheck): boolean {
  const { tool, input, subject, compiled, session, anchors } = check;
  if (subject.kind === 'bash') {
    if (compiled.allow.bareRule(tool.name, 'Bash')) return true;
    // An unreadable command is never allowed by rule; nor is an empty one, nor one whose file
    // arguments follow a `cd` to a directory that cannot be known before it runs.
    return (
      subject.analyzed.complete &&
      subject.analyzed.commands.length > 0 &&
      suggest(check).length === 0 &&
      outputsAllowed(subject, compiled, anchors) &&
      !(changesDirectory(subject) && subject.files().unresolvedPaths)
    );
  }
  if (compiled.allow.rulesFor(tool.name, tool.family).some((rule) => matchesRule(rule, tool, input, subject, anchors))) return true;
  return sessionAllows(session, tool.name, subject);
}

/**
 * Output redirections of an allowed command, and files it writes through options or as its
 * destination (`sort -o f`, `tar -x -C d`), must be covered by Edit allow rules too.
 */
function outputsAllowed(subject: Extract<PermissionSubject, { kind: 'bash' }>, compiled: CompiledRules, anchors: PathAnchors): boolean {
  // Checked on the parse first: resolving paths costs syscalls.
  const { redirects, commands } = subject.analyzed;
  if (redirects.every((redirect) => redirect.direction === 'in') && commands.every((command) => command.writeTargets.length === 0 && !command.unknownWrites)) return true;
  const { outputs, uncertain } = subject.files();
  const editRules = compiled.allow.rulesFor('Edit');
  // Where an expanded output lands is not known: only a bare `Edit` allow covers it.
  if (uncertain.some((path) => path.access === 'output') && !editRules.some((rule) => rule.kind === 'any')) return false;
  return outputs.every((candidates) =>
    editRules.some((rule) => rule.kind === 'any' || (rule.kind === 'path' && matchesPathPattern(rule.path!, candidates.slice(-1), anchors, false))),
  );
}

function allowRuleText(check: AllowCheck): string | undefined {
  const { tool, input, subject, compiled, anchors } = check;
  if (subject.kind === 'bash') {
    const bare = compiled.allow.bareRule(tool.name, 'Bash');
    if (bare) return bare.text;
    const rules = subject.analyzed.commands.map((command) => matchCommand(compiled.allow, tool, [command.allowForm])?.text);
    return rules.every((text) => text !== undefined) ? [...new Set(rules)].join(', ') : undefined;
  }
  return compiled.allow.rulesFor(tool.name, tool.family).find((rule) => matchesRule(rule, tool, input, subject, anchors))?.text;
}

function editable(candidates: readonly string[], compiled: CompiledRules, anchors: PathAnchors): boolean {
  return insideDirectories(candidates, [anchors.cwd, ...compiled.additionalDirectories], anchors.cwd) && !candidates.some((path) => PROTECTED.test(path));
}

/** What the mode decides for a call no rule decided; a declared family gets its built-in's defaults. */
function modePolicy(tool: JudgedTool, subject: PermissionSubject, mode: PermissionMode, compiled: CompiledRules, anchors: PathAnchors): PermissionVerdict {
  const { name, family } = tool;
  if (family === 'Read' || SAFE_TOOLS.has(name)) return { decision: 'auto', reason: `${name} only reads` };
  if (mode === 'bypassPermissions') {
    return { decision: 'auto', reason: 'bypassPermissions mode' };
  }
  if (mode === 'plan') {
    return family === 'WebFetch'
      ? { decision: 'approve', reason: `${name} needs approval` }
      : { decision: 'deny', reason: `${name} is not available in plan mode (read-only)` };
  }
  if (mode === 'acceptEdits') {
    if (family === 'Edit' && subject.kind === 'path' && subject.candidates && editable(subject.candidates, compiled, anchors)) {
      return { decision: 'auto', reason: 'acceptEdits mode: edit inside the working directories' };
    }
    if (subject.kind === 'bash' && subject.analyzed.complete && acceptEditsBash(tool, subject, compiled, anchors)) {
      return { decision: 'auto', reason: 'acceptEdits mode: file-system command inside the working directories' };
    }
  }
  return { decision: 'approve', reason: `${name} needs approval in ${mode} mode` };
}

/** Whether the command has a `cd`, `pushd` or `popd` (its later relative paths move). */
function changesDirectory(subject: Extract<PermissionSubject, { kind: 'bash' }>): boolean {
  return subject.analyzed.commands.some((command) => command.name === 'cd' || command.name === 'pushd' || command.name === 'popd');
}

/**
 * acceptEdits also approves `mkdir`, `touch`, `mv`, `cp` inside working directories; every
 * output (redirection, write option, destination) must be inside them too.
 */
function acceptEditsBash(
  tool: JudgedTool,
  subject: Extract<PermissionSubject, { kind: 'bash' }>,
  compiled: CompiledRules,
  anchors: PathAnchors,
): boolean {
  const files = subject.files();
  // Its arguments are resolved where the command starts; after a `cd` they may be elsewhere.
  if (files.changesDirectory) return false;
  if (!files.outputs.every((candidates) => editable(candidates, compiled, anchors))) return false;
  // An output the shell expands (`> secre?s/k`, `> $OUT`) may land anywhere.
  if (files.uncertain.some((path) => path.access === 'output')) return false;
  return subject.analyzed.commands.every((command) => {
    if (matchCommand(compiled.allow, tool, [command.allowForm])) return true;
    if (!FS_COMMANDS.has(command.name) || command.allowForm.split(' ')[0] !== command.name) return false;
    const paths = command.patternArgs.filter((arg) => !arg.startsWith('-'));
    // Each argument must name one known path (`touch {a,/etc/x}` names two, one outside).
    return (
      paths.length > 0 &&
      paths.every((arg) => {
        const expanded = expandShellPath(arg, subject.resolvePath('.')[0]!, anchors.homeDir);
        return expanded.kind === 'literal' && expanded.paths.every((path) => editable(subject.resolvePath(path), compiled, anchors));
      })
    );
  });
}

/** `rm` of `/`, the home directory, the working directory or one of its parents is never automatic. */
function criticalReason(tool: JudgedTool, subject: PermissionSubject, anchors: PathAnchors, mode: PermissionMode): string | undefined {
  if (tool.family === 'Bash' && subject.kind === 'bash' && subject.analyzed.commands.some((command) => command.name === 'rm' || command.name === 'rmdir')) {
    const critical = new Set<string>(['/', anchors.homeDir]);
    // The session cwd and where the command starts (after an earlier `cd`), with their parents.
    for (const start of [anchors.cwd, ...subject.resolvePath('.')]) {
      for (let dir = start; ; dir = dirname(dir)) {
        critical.add(dir);
        if (dirname(dir) === dir) break;
      }
    }
    const files = subject.files();
    // After a `cd` to a directory known only at run time, what `rm` removes cannot be told.
    if (files.unresolvedPaths) return 'the command removes files after a cd to a directory that cannot be known before it runs; it always needs approval';
    for (const candidates of files.removes) {
      const hit = candidates.find((path) => critical.has(path.replace(/\/+$/, '') || '/'));
      if (hit) return `"${subject.command}" removes a critical directory (${hit}); it always needs approval`;
    }
  }
  if (mode !== 'bypassPermissions' && tool.family === 'Edit' && subject.kind === 'path' && subject.candidates?.some((path) => PROTECTED.test(path))) {
    return `${subject.candidates[0]} is a protected path; edits to it always need approval`;
  }
  return undefined;
}
