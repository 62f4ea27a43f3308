import { z } from 'zod';

/** Permission modes Claude Code and Tessera accept in `permissions.defaultMode`. */
const permissionMode = z.enum(['default', 'manual', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'auto']);
const rules = z.array(z.string());

export const permissionsSchema = z.looseObject({
  allow: rules.optional(),
  ask: rules.optional(),
  deny: rules.optional(),
  defaultMode: permissionMode.optional(),
  additionalDirectories: z.array(z.string()).optional(),
  disableBypassPermissionsMode: z.literal('disable').optional(),
});

const handlerCommon = {
  /** Seconds, as in Claude Code. */
  timeout: z.number().positive().optional(),
  statusMessage: z.string().optional(),
  once: z.boolean().optional(),
  if: z.string().optional(),
};

/**
 * Hook handlers, checked structurally against the contract's `HooksConfig` shapes. The hooks
 * runner (`@tessera/plugin-hooks`) owns normalisation; this schema only refuses wrong types.
 */
export const hookHandlerSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('command'), command: z.string(), async: z.boolean().optional(), shell: z.string().optional(), args: z.array(z.string()).optional(), ...handlerCommon }),
  z.looseObject({ type: z.literal('http'), url: z.string(), headers: z.record(z.string(), z.string()).optional(), allowedEnvVars: z.array(z.string()).optional(), ...handlerCommon }),
  z.looseObject({ type: z.literal('prompt'), prompt: z.string(), model: z.string().optional(), ...handlerCommon }),
  z.looseObject({ type: z.literal('agent'), prompt: z.string(), model: z.string().optional(), ...handlerCommon }),
  z.looseObject({ type: z.literal('mcp_tool'), server: z.string(), tool: z.string(), input: z.unknown().optional(), ...handlerCommon }),
]);

export const hookMatcherGroupSchema = z.looseObject({
  matcher: z.string().optional(),
  hooks: z.array(hookHandlerSchema),
});

/** Event name → matcher groups. Event names are open: newer Claude Code events are kept. */
export const hooksSchema = z.record(z.string(), z.array(hookMatcherGroupSchema));

/** `providers.<key>`: `type` is checked when the profile is resolved, to name the file. */
export const providerProfileSchema = z.looseObject({
  type: z.string().min(1).optional(),
  model: z.string().optional(),
  apiKey: z.string().optional(),
  baseURL: z.string().optional(),
  /** Milliseconds. */
  timeout: z.number().positive().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});

/** The legacy single `provider` block (`name` is the provider type). */
export const legacyProviderSchema = z.looseObject({
  name: z.string().optional(),
  type: z.string().optional(),
  model: z.string().optional(),
  apiKey: z.string().optional(),
  baseURL: z.string().optional(),
  timeout: z.number().positive().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
});

/** Claude Code coerces `env` values to strings (`"MAX_THINKING_TOKENS": 31999`); so does Tessera. */
const envValue = z.preprocess((value) => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : value), z.string());
/**
 * `enabledPlugins` values are booleans, or (Claude Code's extended form) a list of version
 * constraints on an enabled plugin. Tessera does not apply the constraints: the list reads as
 * `true` and the loader warns.
 */
const enabledPlugin = z.preprocess((value) => (Array.isArray(value) && value.every((item) => typeof item === 'string') ? true : value), z.boolean());

/**
 * One schema for a whole settings file (`.tessera/settings.json`, `.claude/settings.json`…).
 * Known keys are strict about their type; unknown keys pass through (the loader warns).
 */
export const settingsSchema = z.looseObject({
  $schema: z.string().optional(),
  permissions: permissionsSchema.optional(),
  hooks: hooksSchema.optional(),
  disableAllHooks: z.boolean().optional(),
  env: z.record(z.string(), envValue).optional(),
  currentProvider: z.string().optional(),
  providers: z.record(z.string(), providerProfileSchema).optional(),
  provider: legacyProviderSchema.optional(),
  model: z.string().optional(),
  language: z.string().optional(),
  enabledPlugins: z.record(z.string(), enabledPlugin).optional(),
  extraKnownMarketplaces: z.record(z.string(), z.looseObject({ source: z.looseObject({ source: z.string() }) })).optional(),
  enableAllProjectMcpServers: z.boolean().optional(),
  enabledMcpjsonServers: z.array(z.string()).optional(),
  disabledMcpjsonServers: z.array(z.string()).optional(),
  includeCoAuthoredBy: z.boolean().optional(),
  cleanupPeriodDays: z.number().int().nonnegative().optional(),
  disableSkillShellExecution: z.boolean().optional(),
  apiKeyHelper: z.string().optional(),
  outputStyle: z.string().optional(),
  statusLine: z.looseObject({ type: z.string() }).optional(),
});

export type Settings = z.infer<typeof settingsSchema>;
export type PermissionsSettings = z.infer<typeof permissionsSchema>;
export type ProviderProfileSettings = z.infer<typeof providerProfileSchema>;

export const KNOWN_SETTINGS_KEYS: ReadonlySet<string> = new Set(Object.keys(settingsSchema.shape));

/** Keys people put in settings.json that belong elsewhere, with where to move them. */
export const MISPLACED_KEYS: Readonly<Record<string, string>> = {
  mcpServers: '`mcpServers` is not a settings key; move the servers to `.mcp.json` in the project root.',
};

/**
 * JSON Schema (draft 2020-12) for settings files, for editors (`"$schema": …`). Generated
 * from the zod schema so the two cannot drift; `plugins/config/settings.schema.json` is this
 * output, checked by a test.
 */
export function settingsJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(settingsSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'https://tessera.dev/schemas/settings.schema.json',
    title: 'Tessera settings',
    description: 'Settings for .tessera/settings.json (and Claude Code compatible .claude/settings.json).',
  };
}
