import { readFileSync } from 'node:fs';
import type { Diagnostic } from '@tessera/contracts';
import { formatPath, parseJsonText } from '@tessera/formats';
import { CLAUDE_CODE_SETTINGS_KEYS } from './claude-code-settings-keys.js';
import { SettingsPolicyError } from './errors.js';
import { KNOWN_SETTINGS_KEYS, MISPLACED_KEYS, settingsSchema, type Settings } from './settings-schema.js';

export type LayerScope = 'user' | 'project' | 'local' | 'cli';
/** Every scope, lowest precedence first: `cli` is the `--settings` file. */
export const LAYER_SCOPES: readonly LayerScope[] = Object.freeze(['user', 'project', 'local', 'cli'] as const);

/** One settings file considered by `loadConfig`, lowest precedence first. */
export interface SettingsLayer {
  file: string;
  scope: LayerScope;
  /** False when the file does not exist (not an error). */
  exists: boolean;
  /** What this layer contributes after validation (invalid keys removed). */
  settings?: Settings;
  /** True when part or all of the file was rejected (see diagnostics). */
  failed: boolean;
}

/**
 * Reads and validates one layer. Invalid parts are dropped with located errors, except that
 * `permissions.deny` / `permissions.ask` rules are recovered wherever they can be read; when
 * they cannot (unreadable file, unparseable rule list), this throws `SettingsPolicyError`
 * rather than continue with a weaker policy than the file states.
 */
export function readSettingsLayer(file: string, scope: LayerScope): { layer: SettingsLayer; diagnostics: Diagnostic[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { layer: { file, scope, exists: false, failed: false }, diagnostics: [] };
    const diagnostic: Diagnostic = { severity: 'error', file, message: `Cannot read settings file ${file} (${code ?? String(error)}); fix its permissions or remove it.` };
    throw new SettingsPolicyError(file, [diagnostic], 'it cannot be read, so its deny rules are unknown');
  }
  const json = parseJsonText(text, file);
  if (!json.ok) return readBrokenJson(file, scope, text, json.diagnostic);
  if (json.value === null || typeof json.value !== 'object' || Array.isArray(json.value)) {
    const diagnostic: Diagnostic = { severity: 'error', file, line: 1, column: 1, message: 'A settings file must contain a JSON object ({ … }).' };
    return { layer: { file, scope, exists: true, failed: true }, diagnostics: [diagnostic] };
  }
  return validateLayer(file, scope, json.value as Record<string, unknown>);
}

function validateLayer(file: string, scope: LayerScope, raw: Record<string, unknown>): { layer: SettingsLayer; diagnostics: Diagnostic[] } {
  const diagnostics = keyDiagnostics(file, raw);
  const parsed = settingsSchema.safeParse(raw);
  if (parsed.success) return { layer: { file, scope, exists: true, settings: parsed.data, failed: false }, diagnostics };

  const cleaned: Record<string, unknown> = structuredClone(raw);
  for (const issue of parsed.error.issues) {
    const path = formatPath(issue.path);
    diagnostics.push({ severity: 'error', file, path: path || '(root)', message: `Invalid setting at \`${path || '(root)'}\`: ${issue.message}. This value is ignored until it is fixed.` });
    removeInvalid(cleaned, issue.path, file, diagnostics);
  }
  compactHooks(cleaned);
  const retry = settingsSchema.safeParse(cleaned);
  if (!retry.success) {
    // Should not happen (every failing path was removed); refuse rather than guess.
    throw new SettingsPolicyError(file, diagnostics, 'its invalid values could not be separated from the valid ones');
  }
  return { layer: { file, scope, exists: true, settings: retry.data, failed: true }, diagnostics };
}

/**
 * Keys the schema does not check: Claude Code's own settings are info (a shared settings file
 * is full of them), anything else a warning (likely a typo or a key in the wrong file). Values
 * Tessera reads differently from how they are written are reported here too.
 */
function keyDiagnostics(file: string, raw: Record<string, unknown>): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const key of Object.keys(raw)) {
    if (KNOWN_SETTINGS_KEYS.has(key)) continue;
    if (MISPLACED_KEYS[key] !== undefined) diagnostics.push({ severity: 'warning', file, path: key, message: MISPLACED_KEYS[key] });
    else if (CLAUDE_CODE_SETTINGS_KEYS.has(key)) diagnostics.push({ severity: 'info', file, path: key, message: `\`${key}\` is a Claude Code setting Tessera does not use; it is kept.` });
    else diagnostics.push({ severity: 'warning', file, path: key, message: `Unknown settings key \`${key}\`; it is kept but Tessera does not use it (check the spelling).` });
  }
  for (const [name, value] of entriesOf(raw.env)) {
    if (typeof value === 'number' || typeof value === 'boolean') {
      const path = formatPath(['env', name]);
      diagnostics.push({ severity: 'info', file, path, message: `\`${path}\` is a ${typeof value}; it is set as the string "${String(value)}", as Claude Code does.` });
    }
  }
  for (const [id, value] of entriesOf(raw.enabledPlugins)) {
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      const path = formatPath(['enabledPlugins', id]);
      diagnostics.push({ severity: 'warning', file, path, message: `\`${path}\` lists version constraints, which Tessera does not apply; the plugin counts as enabled.` });
    }
  }
  return diagnostics;
}

function entriesOf(value: unknown): Array<[string, unknown]> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
}

const POLICY_LISTS = new Set(['deny', 'ask']);
/** Maps whose entries stand alone: a bad entry drops only itself, not the whole map. */
const ENTRY_MAPS = new Set(['providers', 'permissions', 'env', 'enabledPlugins', 'extraKnownMarketplaces']);

/** Removes the value at `path`, but salvages deny/ask rule lists instead of dropping them. */
function removeInvalid(root: Record<string, unknown>, path: readonly PropertyKey[], file: string, diagnostics: Diagnostic[]): void {
  const [first, second] = path;
  if (first === 'permissions' && typeof second === 'string' && POLICY_LISTS.has(second)) {
    const permissions = root.permissions as Record<string, unknown>;
    const list = permissions[second];
    if (Array.isArray(list)) permissions[second] = list.filter((rule): rule is string => typeof rule === 'string');
    else if (typeof list === 'string') permissions[second] = [list];
    else throw new SettingsPolicyError(file, diagnostics, `\`permissions.${second}\` is not a list of rules`);
    return;
  }
  if (first === 'permissions' && path.length === 1) {
    throw new SettingsPolicyError(file, diagnostics, '`permissions` is not an object, so its deny rules cannot be read');
  }
  // Drop the smallest enclosing entry: a whole hook group, one entry of a map (a provider, an
  // env variable, a plugin), or the key.
  const cut = Math.min(path.length, first === 'hooks' ? 3 : typeof first === 'string' && ENTRY_MAPS.has(first) ? 2 : 1);
  let parent: unknown = root;
  for (const segment of path.slice(0, cut - 1)) parent = (parent as Record<PropertyKey, unknown> | undefined)?.[segment];
  const key = path[cut - 1];
  if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1, undefined);
  else if (parent && typeof parent === 'object' && key !== undefined) delete (parent as Record<PropertyKey, unknown>)[key];
}

/** Removes the holes `removeInvalid` leaves in hook group lists (kept until all issues are handled). */
function compactHooks(root: Record<string, unknown>): void {
  const hooks = root.hooks;
  if (!hooks || typeof hooks !== 'object') return;
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (Array.isArray(groups)) (hooks as Record<string, unknown>)[event] = groups.filter((group) => group !== undefined);
  }
}

/**
 * A file that is not valid JSON: if it mentions deny/ask rules, recover them from the text or
 * refuse. Anything else in it is ignored (with the located syntax error).
 */
function readBrokenJson(file: string, scope: LayerScope, text: string, syntax: Diagnostic): { layer: SettingsLayer; diagnostics: Diagnostic[] } {
  const diagnostics = [syntax];
  const permissions: Record<string, string[]> = {};
  for (const list of POLICY_LISTS) {
    const mentioned = new RegExp(`"${list}"\\s*:`).test(text);
    if (!mentioned) continue;
    const recovered = recoverRuleList(text, list);
    if (recovered === undefined) {
      throw new SettingsPolicyError(file, diagnostics, `its \`${list}\` rules cannot be read from the broken JSON`);
    }
    permissions[list] = recovered;
  }
  const layer: SettingsLayer = { file, scope, exists: true, failed: true };
  if (Object.keys(permissions).length > 0) {
    layer.settings = { permissions };
    diagnostics.push({
      severity: 'warning',
      file,
      path: 'permissions',
      message: `Recovered ${Object.values(permissions).flat().length} deny/ask rule(s) from the broken file so they stay in force; everything else in it is ignored until the JSON is fixed.`,
    });
  }
  return { layer, diagnostics };
}

/** Every `"list": [ "…", … ]` occurrence; undefined if one of them is not a plain string list. */
function recoverRuleList(text: string, list: string): string[] | undefined {
  const rules: string[] = [];
  const opening = new RegExp(`"${list}"\\s*:\\s*\\[`, 'g');
  for (const match of text.matchAll(opening)) {
    const rest = text.slice(match.index + match[0].length);
    const body = /^((?:\s*"(?:[^"\\\n]|\\.)*"\s*,?)*)\s*\]/.exec(rest);
    if (!body) return undefined;
    for (const literal of body[1]!.matchAll(/"(?:[^"\\\n]|\\.)*"/g)) rules.push(JSON.parse(literal[0]) as string);
  }
  const mentions = [...text.matchAll(new RegExp(`"${list}"\\s*:`, 'g'))].length;
  const opened = [...text.matchAll(opening)].length;
  return mentions === opened ? rules : undefined;
}
