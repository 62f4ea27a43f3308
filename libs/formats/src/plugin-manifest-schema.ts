import { z } from 'zod';

const componentPaths = z.union([z.string(), z.array(z.string())]);
const inlineOrPaths = z.union([z.string(), z.array(z.union([z.string(), z.record(z.string(), z.unknown())])), z.record(z.string(), z.unknown())]);

export const authorSchema = z.looseObject({
  name: z.string(),
  email: z.string().optional(),
  url: z.string().optional(),
});

/**
 * Known `plugin.json` fields, strict on type (a recognised field with the wrong type fails the
 * load, as in Claude Code); unknown keys pass through and are reported as warnings.
 */
export const pluginManifestSchema = z.looseObject({
  $schema: z.string().optional(),
  name: z.string().min(1),
  displayName: z.string().optional(),
  version: z.string().optional(),
  description: z.string().optional(),
  author: authorSchema.optional(),
  homepage: z.string().optional(),
  repository: z.union([z.string(), z.looseObject({ url: z.string() })]).optional(),
  license: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  metadata: z.unknown().optional(),
  experimental: z.unknown().optional(),
  defaultEnabled: z.boolean().optional(),
  skills: componentPaths.optional(),
  commands: componentPaths.optional(),
  agents: componentPaths.optional(),
  workflows: componentPaths.optional(),
  outputStyles: componentPaths.optional(),
  hooks: inlineOrPaths.optional(),
  mcpServers: inlineOrPaths.optional(),
  lspServers: inlineOrPaths.optional(),
  userConfig: z.record(z.string(), z.looseObject({ type: z.string() })).optional(),
  channels: z.array(z.looseObject({ server: z.string() })).optional(),
  dependencies: z.array(z.union([z.string(), z.looseObject({ name: z.string(), version: z.string().optional() })])).optional(),
});

export type PluginManifest = z.infer<typeof pluginManifestSchema>;

export const KNOWN_MANIFEST_KEYS: ReadonlySet<string> = new Set(Object.keys(pluginManifestSchema.shape));
