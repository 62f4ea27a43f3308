import { mergeSettings } from '@tessera/plugin-config/settings';
import type { CliIO, Subcommand } from '../io.js';
import {
  CommandError,
  commandGroup,
  displayPath,
  isPlainObject,
  json,
  loadSettingsView,
  oneOf,
  overriddenBy,
  positionals,
  readSettingsForEdit,
  reportSettingsDiagnostics,
  settingsFileFor,
  table,
  usageError,
  valueAt,
  warn,
  writeSettings,
  type SettingEdit,
  type SettingsView,
} from './shared.js';

/** Profile types a first-party provider plugin builds, and the variable each reads without `apiKey`. */
const DEFAULT_KEY_ENV: Readonly<Record<string, string>> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' };
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** The `$ENV:NAME` rule of `@tessera/plugin-config`. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_REFERENCE = /^\$ENV:([A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * `tessera provider add|list|use`: provider profiles (`providers.<name>`) and `currentProvider`
 * in the settings files. Keys are only ever stored as `$ENV:NAME` references.
 */
export const runProviderCommand: Subcommand = commandGroup('provider', 'Manage provider profiles (providers.<name> in settings) and pick the current one.', {
  add: {
    usage: 'add <name> --type anthropic|openai [--base-url URL] [--model M] [--api-key-env VAR] [--use] [--force]',
    summary:
      'Add a profile to ~/.tessera/settings.json (provider profiles are read only from user settings, never from a project). The key is stored as the reference $ENV:VAR, never as text; ' +
      'without --api-key-env the provider reads ANTHROPIC_API_KEY / OPENAI_API_KEY. --use also makes it the current provider; --force replaces a profile of that name.',
    options: {
      type: { type: 'string' },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      'api-key-env': { type: 'string' },
      // Declared only to refuse it (and never echo its value).
      'api-key': { type: 'string' },
      global: { type: 'boolean', short: 'g' },
      use: { type: 'boolean' },
      force: { type: 'boolean' },
    },
    async run(args, io) {
      if (args.values['api-key'] !== undefined) {
        throw usageError('--api-key is not accepted: settings never hold a key in clear text. Export the key in an environment variable and pass --api-key-env NAME (stored as $ENV:NAME)');
      }
      const [name] = positionals(args, ['<name>']) as [string];
      const profile = profileFromOptions(name, args.values);
      const file = settingsFileFor('global', io);
      const existing = valueAt(readSettingsForEdit(file), ['providers', name]);
      if (existing !== undefined && args.values.force !== true) {
        throw new CommandError(`provider ${name} already exists in ${file}; pass --force to replace it, or pick another name`);
      }
      const edits: SettingEdit[] = [{ path: ['providers', name], value: profile }];
      if (args.values.use === true) edits.push({ path: ['currentProvider'], value: name });
      for (const warning of writeSettings(file, edits)) warn(io, warning);

      const verb = existing === undefined ? 'Added provider' : 'Replaced provider';
      io.stdout(`${verb} ${name} (${profile.type}) ${existing === undefined ? 'to' : 'in'} ${displayPath(file, io)}\n`);
      const variable = ENV_REFERENCE.exec(String(profile.apiKey ?? ''))?.[1] ?? DEFAULT_KEY_ENV[profile.type];
      if (variable !== undefined && !io.env[variable]) warn(io, `${variable} is not set in this shell; export it before using provider ${name}`);
      const shadowed = overriddenBy(io, file, ['providers', name], USER_SCOPES);
      if (shadowed !== undefined) warn(io, `${shadowed}; the fields it sets override the ones just written`);
      if (args.values.use === true) reportCurrent(io, file, name);
      return 0;
    },
  },
  list: {
    usage: 'list [--json]',
    summary: 'Every profile of the merged settings, the current one marked *, keys shown only as their $ENV reference (and whether it is set).',
    options: { json: { type: 'boolean' } },
    async run(args, io) {
      positionals(args, []);
      const view = userView(loadSettingsView(io));
      reportSettingsDiagnostics(io, view);
      const current = view.merged.currentProvider;
      const profiles = profileRows(view, io);
      if (args.values.json === true) {
        io.stdout(json({ current: current ?? null, profiles }));
        return 0;
      }
      if (profiles.length === 0) {
        io.stdout('No provider profiles. Add one with `tessera provider add <name> --type anthropic|openai`.\n');
      } else {
        const rows = profiles.map((profile) => [
          profile.current ? '*' : '',
          profile.name,
          profile.type ?? '-',
          profile.model ?? '-',
          profile.baseURL ?? '-',
          keyLabel(profile.apiKey),
          displayPath(profile.file, io),
        ]);
        io.stdout(table(['', 'NAME', 'TYPE', 'MODEL', 'BASE URL', 'API KEY', 'FILE'], rows));
      }
      const legacy = view.merged.provider;
      if (current === undefined && legacy !== undefined) {
        io.stdout(`In use: the legacy "provider" block (type ${legacy.type ?? legacy.name ?? '?'}), because currentProvider is not set.\n`);
      }
      if (current !== undefined && !profiles.some((profile) => profile.current)) {
        warn(io, `currentProvider is ${JSON.stringify(current)} but no such profile exists; run \`tessera provider use <name>\``);
      }
      return 0;
    },
  },
  use: {
    usage: 'use <name>',
    summary: 'Set currentProvider in ~/.tessera/settings.json (read only from user settings, never from a project).',
    options: { global: { type: 'boolean', short: 'g' } },
    async run(args, io) {
      const [name] = positionals(args, ['<name>']) as [string];
      const view = userView(loadSettingsView(io));
      reportSettingsDiagnostics(io, view);
      const known = Object.keys(view.merged.providers ?? {});
      if (!known.includes(name)) {
        throw new CommandError(
          `no provider profile ${JSON.stringify(name)}${known.length > 0 ? ` (profiles: ${known.join(', ')})` : ''}; add it with \`tessera provider add ${name} --type anthropic|openai\``,
        );
      }
      const file = settingsFileFor('global', io);
      for (const warning of writeSettings(file, [{ path: ['currentProvider'], value: name }])) warn(io, warning);
      reportCurrent(io, file, name);
      return 0;
    },
  },
});

interface NewProfile {
  type: string;
  model?: string;
  baseURL?: string;
  apiKey?: string;
}

function profileFromOptions(name: string, values: Record<string, string | boolean | undefined>): NewProfile {
  if (!PROFILE_NAME.test(name)) throw usageError(`invalid provider name ${JSON.stringify(name)}: use letters, digits, "-" or "_" (up to 64, starting with a letter or digit)`);
  const type = values.type;
  if (type === undefined) throw usageError('missing --type (anthropic or openai)');
  if (typeof type !== 'string' || !Object.hasOwn(DEFAULT_KEY_ENV, type)) {
    throw usageError(`--type must be one of ${Object.keys(DEFAULT_KEY_ENV).join(', ')} (got ${JSON.stringify(type)}); OpenAI-compatible servers use openai with --base-url`);
  }
  const profile: NewProfile = { type };
  const model = values.model;
  if (model !== undefined) {
    if (typeof model !== 'string' || model.trim() === '') throw usageError('--model needs a model id, e.g. --model claude-sonnet-4-5');
    profile.model = model;
  }
  const baseURL = values['base-url'];
  if (baseURL !== undefined) {
    if (typeof baseURL !== 'string' || !isHttpUrl(baseURL)) throw usageError(`--base-url must be an http(s) URL such as http://localhost:1234/v1 (got ${JSON.stringify(baseURL)})`);
    profile.baseURL = baseURL;
  }
  const variable = values['api-key-env'];
  if (variable !== undefined) {
    // Never echo the value: it may be a key pasted in the wrong place.
    if (typeof variable !== 'string' || !ENV_NAME.test(variable)) throw usageError('--api-key-env takes the NAME of an environment variable (letters, digits and _), not the key itself');
    profile.apiKey = `$ENV:${variable}`;
  }
  return profile;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function reportCurrent(io: CliIO, file: string, name: string): void {
  io.stdout(`Current provider: ${name} (${displayPath(file, io)})\n`);
  const override = overriddenBy(io, file, ['currentProvider'], USER_SCOPES);
  if (override !== undefined) warn(io, `${override}, so the current provider there stays as it is`);
}

type KeySource = { kind: 'env'; variable: string; set: boolean; default: boolean } | { kind: 'literal' } | { kind: 'none' };

interface ProfileRow {
  name: string;
  current: boolean;
  type?: string;
  model?: string;
  baseURL?: string;
  apiKey: KeySource;
  /** The highest settings file that defines the profile. */
  file: string;
}

function profileRows(view: SettingsView, io: CliIO): ProfileRow[] {
  return Object.entries(view.merged.providers ?? {}).map(([name, profile]) => {
    const file = [...view.layers].reverse().find((layer) => valueAt(layer.settings, ['providers', name]) !== undefined)?.file ?? '(settings)';
    const row: ProfileRow = { name, current: view.merged.currentProvider === name, apiKey: keySource(profile, io), file };
    for (const field of ['type', 'model', 'baseURL'] as const) {
      const value = isPlainObject(profile) ? profile[field] : undefined;
      if (typeof value === 'string') row[field] = value;
    }
    return row;
  });
}

function keySource(profile: Record<string, unknown>, io: CliIO): KeySource {
  // The key, else (Anthropic) the bearer token of `options.authToken`.
  const options = isPlainObject(profile.options) ? profile.options : undefined;
  const credential = typeof profile.apiKey === 'string' ? profile.apiKey : typeof options?.authToken === 'string' ? options.authToken : undefined;
  if (credential !== undefined) {
    const variable = ENV_REFERENCE.exec(credential)?.[1];
    return variable === undefined ? { kind: 'literal' } : { kind: 'env', variable, set: Boolean(io.env[variable]), default: false };
  }
  let variable = typeof profile.type === 'string' ? DEFAULT_KEY_ENV[profile.type] : undefined;
  // Without a credential in the profile, the Anthropic provider also reads ANTHROPIC_AUTH_TOKEN.
  if (profile.type === 'anthropic' && !io.env.ANTHROPIC_API_KEY && io.env.ANTHROPIC_AUTH_TOKEN) variable = 'ANTHROPIC_AUTH_TOKEN';
  return variable === undefined ? { kind: 'none' } : { kind: 'env', variable, set: Boolean(io.env[variable]), default: true };
}

function keyLabel(source: KeySource): string {
  if (source.kind === 'literal') return 'literal key in file (replace it with $ENV:NAME)';
  if (source.kind === 'none') return '-';
  return `${source.default ? `default ${source.variable}` : `$ENV:${source.variable}`} (${source.set ? 'set' : 'not set'})`;
}

/** The layers provider settings are read from (see docs/cli/README.md). */
const USER_SCOPES: ReadonlySet<string> = new Set(['user', 'cli']);

/** The view from user settings only: what the CLI takes provider profiles from. */
function userView(view: SettingsView): SettingsView {
  const layers = view.layers.filter((layer) => USER_SCOPES.has(layer.scope));
  return { ...view, layers, merged: mergeSettings(layers.flatMap((layer) => (layer.settings ? [layer.settings] : []))) };
}
