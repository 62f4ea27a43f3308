import { KNOWN_SETTINGS_KEYS } from '@tessera/plugin-config/settings';
import type { Subcommand } from '../io.js';
import {
  CommandError,
  commandGroup,
  displayPath,
  isPlainObject,
  json,
  loadSettingsView,
  oneOf,
  overriddenBy,
  parseKeyPath,
  positionals,
  reportSettingsDiagnostics,
  settingsFileFor,
  table,
  valueAt,
  warn,
  writeSettings,
  type SettingsView,
} from './shared.js';

const SCOPES = ['global', 'project', 'local'] as const;
/** Objects whose arrays replace instead of concatenating when layers merge. */
const REPLACING_ARRAYS = new Set(['providers', 'provider']);
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;

/**
 * `tessera config get|set|list`: the settings layers of `@tessera/plugin-config`. `set` writes
 * `.tessera/settings.json` (default), `.tessera/settings.local.json` (`--local`) or
 * `~/.tessera/settings.json` (`--global`), checked against the settings schema first.
 */
export const runConfigCommand: Subcommand = commandGroup('config', 'Read and change Tessera settings (all layers merged, as a session sees them).', {
  get: {
    usage: 'get <key>',
    summary: 'Print the merged value of a dotted key (strings raw, other values as JSON).',
    async run(args, io) {
      const [key] = positionals(args, ['<key>']) as [string];
      const view = loadSettingsView(io);
      reportSettingsDiagnostics(io, view);
      const value = valueAt(view.merged, parseKeyPath(key));
      if (value === undefined) throw new CommandError(`${key} is not set in any settings file; see \`tessera config list\``);
      io.stdout(typeof value === 'string' ? `${value}\n` : json(value));
      return 0;
    },
  },
  set: {
    usage: 'set <key> <value> [--global|--project|--local]',
    summary:
      'Write a dotted key to .tessera/settings.json (--local: .tessera/settings.local.json, --global: ~/.tessera/settings.json). ' +
      'The value is read as JSON when it parses (42, true, ["a"]), else as text.',
    options: { global: { type: 'boolean', short: 'g' }, project: { type: 'boolean' }, local: { type: 'boolean' } },
    async run(args, io) {
      const [key, text] = positionals(args, ['<key>', '<value>']) as [string, string];
      const scope = oneOf(args, SCOPES) ?? 'project';
      const path = parseKeyPath(key);
      if (!KNOWN_SETTINGS_KEYS.has(path[0] as string)) {
        throw new CommandError(`unknown settings key ${JSON.stringify(path[0])}; keys Tessera reads: ${[...KNOWN_SETTINGS_KEYS].filter((name) => name !== '$schema').join(', ')}`);
      }
      const value = parseValue(text);
      const file = settingsFileFor(scope, io);
      let warnings: string[];
      try {
        warnings = writeSettings(file, [{ path, value }]);
      } catch (error) {
        if (error instanceof CommandError && error.details?.field === key && typeof value !== 'string') {
          throw new CommandError(`${error.message} (${text} was read as JSON; to store it as text, quote it: '"${text}"')`);
        }
        throw error;
      }
      for (const warning of warnings) warn(io, warning);
      io.stdout(`Set ${key} = ${JSON.stringify(value)} in ${displayPath(file, io)}\n`);
      const override = Array.isArray(value) ? undefined : overriddenBy(io, file, path);
      if (override !== undefined) warn(io, `${override}; the value just written has no effect there`);
      return 0;
    },
  },
  list: {
    usage: 'list [--json]',
    summary: 'Every merged setting with the file it comes from (highest layer; all layers for merged lists).',
    options: { json: { type: 'boolean' } },
    async run(args, io) {
      positionals(args, []);
      const view = loadSettingsView(io);
      reportSettingsDiagnostics(io, view);
      const rows = settingRows(view);
      if (args.values.json === true) {
        io.stdout(
          json({
            settings: maskSecrets(view.merged, []),
            sources: Object.fromEntries(rows.map((row) => [row.key, row.files])),
            files: view.layers.map(({ file, scope, exists }) => ({ file, scope, exists })),
          }),
        );
        return 0;
      }
      if (rows.length === 0) io.stdout('No settings are set.\n');
      else io.stdout(table(['KEY', 'VALUE', 'FROM'], rows.map((row) => [row.key, JSON.stringify(row.value), row.files.map((file) => displayPath(file, io)).join(', ')])));
      io.stdout(`\nFiles, lowest precedence first:\n${view.layers.map((layer) => `  ${displayPath(layer.file, io)}${layer.exists ? '' : ' (missing)'}`).join('\n')}\n`);
      return 0;
    },
  },
});

/** JSON when the text parses as JSON, else the text itself (Claude Code's `config set` habit). */
export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

interface SettingRow {
  key: string;
  value: unknown;
  /** The deciding file; every contributing file for lists that merge across layers. */
  files: string[];
}

function settingRows(view: SettingsView): SettingRow[] {
  const rows: SettingRow[] = [];
  const visit = (value: unknown, path: string[]): void => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) visit(child, [...path, key]);
      return;
    }
    const defining = view.layers.filter((layer) => valueAt(layer.settings, path) !== undefined).map((layer) => layer.file);
    const merges = Array.isArray(value) && !REPLACING_ARRAYS.has(path[0] as string);
    rows.push({ key: path.join('.'), value: maskSecret(value, path), files: merges ? defining : defining.slice(-1) });
  };
  visit(view.merged, []);
  return rows;
}

/** Literal API keys and tokens and secret-looking `env` values are shown as a placeholder; `$ENV:` references as they are. */
function maskSecret(value: unknown, path: readonly string[]): unknown {
  if (typeof value !== 'string' || value.startsWith('$ENV:')) return value;
  const last = path[path.length - 1] ?? '';
  if (last === 'apiKey' || last === 'authToken') return '(literal key hidden; store it as $ENV:NAME)';
  if (path[0] === 'env' && path.length === 2 && SECRET_NAME.test(last)) return '(hidden)';
  return value;
}

function maskSecrets(value: unknown, path: string[]): unknown {
  if (!isPlainObject(value)) return maskSecret(value, path);
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, maskSecrets(child, [...path, key])]));
}
