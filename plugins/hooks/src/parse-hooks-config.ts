import { readFile } from 'node:fs/promises';
import type { Diagnostic, HookEventName, HookHandlerConfig, HookMatcherGroup, HooksConfig, HooksSource, ParseResult } from '@tessera/contracts';
import { validatePermissionRules } from '@tessera/permission-rules';

export const HOOK_EVENTS: readonly HookEventName[] = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'UserPromptSubmit',
  'Stop',
  'StopFailure',
  'SubagentStart',
  'SubagentStop',
  'SessionStart',
  'SessionEnd',
  'PreCompact',
  'PostCompact',
  'Notification',
  'WorktreeCreate',
  'WorktreeRemove',
];
const EVENT_SET: ReadonlySet<string> = new Set(HOOK_EVENTS);

/**
 * Claude Code events Tessera has no hook for yet (2026 list). Their groups are parsed, checked
 * and kept, but never run; the warning says so rather than calling them unknown.
 */
const CLAUDE_CODE_ONLY_EVENTS: ReadonlySet<string> = new Set([
  'PermissionRequest', 'PermissionDenied', 'Setup', 'UserPromptExpansion', 'MessageDisplay', 'PostToolBatch',
  'TaskCreated', 'TaskCompleted', 'TeammateIdle', 'InstructionsLoaded', 'ConfigChange', 'CwdChanged',
  'DirectoryAdded', 'FileChanged', 'Elicitation', 'ElicitationResult',
]);

/**
 * Parsed hooks: the events Tessera runs, plus any other event kept as written (normalised the
 * same way). The runner reads only `HOOK_EVENTS`, so the others never fire.
 */
export type ParsedHooksConfig = HooksConfig & Partial<Record<string, HookMatcherGroup[]>>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A stable key for "identical handler" deduplication. */
export function handlerKey(handler: HookHandlerConfig): string {
  const main = handler.type === 'command' ? handler.command : handler.type === 'http' ? handler.url : handler.type === 'callback' ? handler.id : handler.prompt;
  return JSON.stringify([handler.type, main, handler.if ?? '', handler.type === 'command' ? (handler.shell ?? '') : '']);
}

function parseHandler(raw: unknown, at: string, file: string, diagnostics: Diagnostic[]): HookHandlerConfig | undefined {
  const report = (severity: Diagnostic['severity'], message: string): undefined => {
    diagnostics.push({ severity, file, path: at, message });
    return undefined;
  };
  if (!isRecord(raw)) return report('error', 'a hook handler must be an object like {"type": "command", "command": "…"}; this one is skipped');
  const type = raw.type;
  const common: Partial<HookHandlerConfig> = {};
  if (raw.timeout !== undefined) {
    if (typeof raw.timeout === 'number' && Number.isFinite(raw.timeout) && raw.timeout > 0) common.timeout = raw.timeout;
    else report('warning', `"timeout" must be a positive number of seconds, got ${JSON.stringify(raw.timeout)}; the default is used`);
  }
  if (typeof raw.statusMessage === 'string') common.statusMessage = raw.statusMessage;
  if (typeof raw.once === 'boolean') common.once = raw.once;
  if (typeof raw.if === 'string') {
    common.if = raw.if;
    // `if` is a permission rule; one that cannot be read would match every call of its tool.
    for (const problem of validatePermissionRules([raw.if])) {
      report('warning', `"if" ${JSON.stringify(raw.if)} is not a valid permission rule (${problem.message}); it matches every call of its tool until fixed`);
    }
  } else if (raw.if !== undefined) report('warning', `"if" must be a permission rule string such as "Bash(git *)", got ${JSON.stringify(raw.if)}; it is ignored`);
  if (type === 'command' || (type === undefined && typeof raw.command === 'string')) {
    if (type === undefined) report('warning', 'handler has no "type"; treated as "command"');
    if (typeof raw.command !== 'string' || raw.command.trim() === '') return report('error', 'a command hook needs a non-empty "command" string; this one is skipped');
    return {
      ...common,
      type: 'command',
      command: raw.command,
      ...(typeof raw.async === 'boolean' ? { async: raw.async } : {}),
      ...(typeof raw.shell === 'string' ? { shell: raw.shell } : {}),
    };
  }
  if (type === 'http') {
    if (typeof raw.url !== 'string' || !/^https?:\/\//i.test(raw.url)) return report('error', 'an http hook needs a "url" starting with http:// or https://; this one is skipped');
    const headers = isRecord(raw.headers)
      ? Object.fromEntries(Object.entries(raw.headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
      : undefined;
    const allowed = Array.isArray(raw.allowedEnvVars) ? raw.allowedEnvVars.filter((name): name is string => typeof name === 'string') : undefined;
    return { ...common, type: 'http', url: raw.url, ...(headers ? { headers } : {}), ...(allowed ? { allowedEnvVars: allowed } : {}) };
  }
  if (type === 'prompt' || type === 'agent') {
    if (typeof raw.prompt !== 'string' || raw.prompt.trim() === '') return report('error', `a ${type} hook needs a non-empty "prompt"; this one is skipped`);
    return { ...common, type, prompt: raw.prompt, ...(typeof raw.model === 'string' ? { model: raw.model } : {}) };
  }
  return report('warning', `hook type ${JSON.stringify(type)} is not supported (command, http, prompt, agent); this handler is skipped`);
}

/**
 * Reads a `hooks` value (settings key or plugin hooks.json) leniently: unknown keys are
 * ignored, matcher-less groups and empty arrays are fine, identical handlers in one event
 * are kept once, and anything unusable is skipped with a located diagnostic. An event Tessera
 * does not run (`UserPromptExpansion`, a newer or misspelt name) is kept with a warning, never
 * dropped with an error. Never throws.
 */
export function parseHooksConfig(value: unknown, source: HooksSource | string): ParseResult<ParsedHooksConfig> {
  const file = typeof source === 'string' ? source : source.file;
  const diagnostics: Diagnostic[] = [];
  const config: ParsedHooksConfig = {};
  if (value === undefined || value === null) return { value: config, diagnostics };
  if (!isRecord(value)) {
    diagnostics.push({ severity: 'error', file, path: 'hooks', message: '"hooks" must be an object mapping event names to matcher groups' });
    return { value: config, diagnostics };
  }
  for (const [event, groups] of Object.entries(value)) {
    const at = `hooks.${event}`;
    if (!EVENT_SET.has(event)) {
      const message = CLAUDE_CODE_ONLY_EVENTS.has(event)
        ? `"${event}" is a Claude Code hook event Tessera does not run yet; its hooks are kept but never fire`
        : `"${event}" is not a hook event Tessera knows (check the spelling; Tessera runs ${HOOK_EVENTS.join(', ')}); its hooks are kept but never fire`;
      diagnostics.push({ severity: 'warning', file, path: at, message });
    }
    if (!Array.isArray(groups)) {
      diagnostics.push({ severity: 'error', file, path: at, message: `"${event}" must be an array of {"matcher", "hooks"} groups` });
      continue;
    }
    const seen = new Set<string>();
    const parsed: HookMatcherGroup[] = [];
    groups.forEach((group, index) => {
      const groupAt = `${at}[${index}]`;
      if (!isRecord(group) || !Array.isArray(group.hooks)) {
        diagnostics.push({ severity: 'error', file, path: groupAt, message: 'a matcher group must be an object with a "hooks" array; this group is skipped' });
        return;
      }
      if (group.matcher !== undefined && typeof group.matcher !== 'string') {
        diagnostics.push({ severity: 'warning', file, path: `${groupAt}.matcher`, message: '"matcher" must be a string; this group matches everything' });
      }
      const matcher = typeof group.matcher === 'string' ? group.matcher : undefined;
      const handlers: HookHandlerConfig[] = [];
      group.hooks.forEach((raw: unknown, handlerIndex: number) => {
        const handler = parseHandler(raw, `${groupAt}.hooks[${handlerIndex}]`, file, diagnostics);
        if (!handler) return;
        const key = `${matcher ?? ''}\0${handlerKey(handler)}`;
        if (seen.has(key)) return;
        seen.add(key);
        handlers.push(handler);
      });
      if (handlers.length > 0) parsed.push({ ...(matcher === undefined ? {} : { matcher }), hooks: handlers });
    });
    if (parsed.length > 0) config[event] = parsed;
  }
  return { value: config, diagnostics };
}

function isValidPrefix(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message);
    return /end of JSON|Unterminated/i.test(message) || (position !== null && Number(position[1]) >= prefix.length);
  }
}

/** Line and column of the first character that makes the JSON invalid (binary search over prefixes). */
function jsonErrorLocation(text: string): { line?: number; column?: number } {
  if (text.length > 1_000_000) return {};
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (isValidPrefix(text.slice(0, mid))) low = mid;
    else high = mid - 1;
  }
  const lines = text.slice(0, low).split('\n');
  return { line: lines.length, column: lines.at(-1)!.length + 1 };
}

/**
 * Reads a JSON file holding a `hooks` key — a settings file or a plugin's hooks/hooks.json —
 * and parses that key. A missing file, bad JSON or a bad shape become diagnostics. A file that
 * is a bare event map (`{"PreToolUse": […]}`, the inline form from plugin.json) is read as one,
 * with a warning, since Claude Code wants the `"hooks"` wrapper in a file.
 */
export async function readHooksFile(path: string, source: Omit<HooksSource, 'file'> = {}): Promise<ParseResult<ParsedHooksConfig>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const message = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : String((error as Error).message);
    return { value: {}, diagnostics: [{ severity: 'error', file: path, message: `cannot read hooks: ${message}` }] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    return {
      value: {},
      diagnostics: [{ severity: 'error', file: path, ...jsonErrorLocation(text), message: `invalid JSON: ${(error as Error).message}; fix the file so its hooks load` }],
    };
  }
  if (!isRecord(json)) return { value: {}, diagnostics: [{ severity: 'error', file: path, message: 'the file must hold a JSON object with a "hooks" key' }] };
  if (json.hooks === undefined && Object.keys(json).some(isHookEventName)) {
    const parsed = parseHooksConfig(json, { file: path, ...source });
    const wrapper: Diagnostic = { severity: 'warning', file: path, message: 'the file has no "hooks" key, so its event map is read as the hooks; wrap it as {"hooks": {…}}, which Claude Code requires' };
    return { value: parsed.value, diagnostics: [wrapper, ...parsed.diagnostics] };
  }
  return parseHooksConfig(json.hooks, { file: path, ...source });
}

function isHookEventName(key: string): boolean {
  return EVENT_SET.has(key) || CLAUDE_CODE_ONLY_EVENTS.has(key);
}

/**
 * Concatenates configs event by event (hooks from every layer run; none replaces another).
 * Events Tessera does not run are carried along like the others.
 */
export function mergeHooksConfigs(...configs: readonly ParsedHooksConfig[]): ParsedHooksConfig {
  const merged: ParsedHooksConfig = {};
  for (const config of configs) {
    for (const [event, groups] of Object.entries(config)) {
      if (groups && groups.length > 0) merged[event] = [...(merged[event] ?? []), ...groups];
    }
  }
  return merged;
}
