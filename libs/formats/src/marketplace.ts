import { dirname, resolve, sep } from 'node:path';
import type { Diagnostic, ParseResult } from '@tessera/contracts';
import { z } from 'zod';
import { marketplaceNameDiagnostics, pluginNameDiagnostics } from './name-rules.js';
import { authorSchema } from './plugin-manifest-schema.js';
import { parseJsonText, readTextFile } from './read-text.js';
import { zodDiagnostics } from './zod-diagnostics.js';

/** Where a marketplace entry's plugin comes from, normalised. */
export type PluginSource =
  | { source: 'relative'; path: string; resolvedPath: string }
  | { source: 'github'; repo: string; ref?: string; sha?: string }
  | { source: 'url'; url: string; ref?: string; sha?: string; path?: string }
  | { source: 'git-subdir'; url: string; path: string; ref?: string; sha?: string }
  | { source: 'npm'; package: string; version?: string; registry?: string }
  | { source: 'archive'; url: string; sha256?: string }
  | { source: 'command'; command: string; timeout?: number; mode?: 'copy' | 'link' };

export interface MarketplaceEntry {
  name: string;
  source: PluginSource;
  /** Default true. `false`: the entry is the whole plugin definition (no plugin.json components). */
  strict: boolean;
  version?: string;
  description?: string;
  /** Every other field as written (author, category, tags, component overrides…). */
  fields: Record<string, unknown>;
}

export interface Marketplace {
  name: string;
  owner: { name: string; email?: string; url?: string };
  description?: string;
  version?: string;
  /** The directory containing `.claude-plugin/`: relative sources resolve from here. */
  root: string;
  plugins: MarketplaceEntry[];
  renames?: Record<string, string | null>;
}

const sha = z.string().regex(/^[0-9a-f]{40}$/i, 'must be a 40-character commit SHA');
const gitRef = { ref: z.string().optional(), sha: sha.optional() };
const sourceSchema = z.union([
  z.string().min(1),
  z.discriminatedUnion('source', [
    z.looseObject({ source: z.literal('github'), repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'must be "owner/repo"'), ...gitRef }),
    z.looseObject({ source: z.literal('url'), url: z.string().min(1), path: z.string().optional(), ...gitRef }),
    z.looseObject({ source: z.literal('git'), url: z.string().min(1), path: z.string().optional(), ...gitRef }),
    z.looseObject({ source: z.literal('git-subdir'), url: z.string().min(1), path: z.string().min(1), ...gitRef }),
    z.looseObject({ source: z.literal('npm'), package: z.string().min(1), version: z.string().optional(), registry: z.string().optional() }),
    z.looseObject({ source: z.literal('archive'), url: z.string().min(1), sha256: z.string().optional() }),
    z.looseObject({ source: z.literal('command'), command: z.string().min(1), timeout: z.number().optional(), mode: z.enum(['copy', 'link']).optional() }),
  ]),
]);
const entrySchema = z.looseObject({
  name: z.string().min(1),
  source: sourceSchema,
  strict: z.boolean().optional(),
  version: z.string().optional(),
  description: z.string().optional(),
});
const marketplaceSchema = z.looseObject({
  $schema: z.string().optional(),
  name: z.string().min(1),
  owner: authorSchema,
  description: z.string().optional(),
  version: z.string().optional(),
  metadata: z.looseObject({ description: z.string().optional(), version: z.string().optional(), pluginRoot: z.string().optional() }).optional(),
  renames: z.record(z.string(), z.string().nullable()).optional(),
  plugins: z.array(z.unknown()),
});
/** Top-level keys Claude Code documents; Tessera does not read `allowCrossMarketplaceDependenciesOn`. */
const KNOWN_MARKETPLACE_KEYS: ReadonlySet<string> = new Set([...Object.keys(marketplaceSchema.shape), 'allowCrossMarketplaceDependenciesOn']);

/**
 * Reads `.claude-plugin/marketplace.json`. A broken entry is reported (with its index) and left
 * out; the rest of the catalogue is kept. Relative sources must stay inside the marketplace.
 */
export function readMarketplace(path: string): ParseResult<Marketplace> {
  const file = resolve(path);
  const parent = dirname(file);
  const root = parent.endsWith(`${sep}.claude-plugin`) ? dirname(parent) : parent;
  const empty: Marketplace = { name: '', owner: { name: '' }, root, plugins: [] };
  const text = readTextFile(file);
  if (!text.ok) return { value: empty, diagnostics: [text.diagnostic] };
  const json = parseJsonText(text.value, file);
  if (!json.ok) return { value: empty, diagnostics: [json.diagnostic] };
  const parsed = marketplaceSchema.safeParse(json.value);
  if (!parsed.success) return { value: empty, diagnostics: zodDiagnostics(parsed.error, file, '', 'marketplace field') };
  const data = parsed.data;
  const diagnostics: Diagnostic[] = [];
  diagnostics.push(...marketplaceNameDiagnostics(data.name, file));
  for (const key of Object.keys(data)) {
    if (!KNOWN_MARKETPLACE_KEYS.has(key)) diagnostics.push({ severity: 'warning', file, path: key, message: `Unknown marketplace.json key \`${key}\`; it is ignored.` });
  }
  const value: Marketplace = { name: data.name, owner: data.owner, root, plugins: [] };
  const description = data.description ?? data.metadata?.description;
  if (description !== undefined) value.description = description;
  const version = data.version ?? data.metadata?.version;
  if (version !== undefined) value.version = version;
  if (data.renames !== undefined) value.renames = data.renames;
  const pluginRoot = data.metadata?.pluginRoot;
  const seen = new Set<string>();
  data.plugins.forEach((raw, index) => {
    const entry = entrySchema.safeParse(raw);
    if (!entry.success) {
      diagnostics.push(...zodDiagnostics(entry.error, file, `plugins[${index}]`, 'marketplace entry'));
      return;
    }
    const nameProblems = pluginNameDiagnostics(entry.data.name, file, `plugins[${index}].name`);
    diagnostics.push(...nameProblems);
    if (nameProblems.some((problem) => problem.severity === 'error')) return;
    const source = normaliseSource(entry.data.source, root, pluginRoot, file, index, diagnostics);
    if (source === undefined) return;
    if (seen.has(entry.data.name)) {
      diagnostics.push({ severity: 'warning', file, path: `plugins[${index}].name`, message: `Plugin \`${entry.data.name}\` is listed twice; the first entry wins.` });
      return;
    }
    seen.add(entry.data.name);
    const { name, source: _source, strict, version: entryVersion, description: entryDescription, ...fields } = entry.data;
    const result: MarketplaceEntry = { name, source, strict: strict ?? true, fields };
    if (entryVersion !== undefined) result.version = entryVersion;
    if (entryDescription !== undefined) result.description = entryDescription;
    value.plugins.push(result);
  });
  return { value, diagnostics };
}

function normaliseSource(
  raw: z.infer<typeof sourceSchema>,
  root: string,
  pluginRoot: string | undefined,
  file: string,
  index: number,
  diagnostics: Diagnostic[],
): PluginSource | undefined {
  if (typeof raw !== 'string') {
    const { source, ...rest } = raw;
    // `git` is the marketplace-source spelling; for plugin sources it means the same as `url`.
    return { ...rest, source: source === 'git' ? 'url' : source } as PluginSource;
  }
  const relative = raw.startsWith('./') || raw === '.' || raw.startsWith('../') ? raw : pluginRoot !== undefined ? `${pluginRoot.replace(/\/$/, '')}/${raw}` : undefined;
  if (relative === undefined) {
    diagnostics.push({ severity: 'error', file, path: `plugins[${index}].source`, message: `Source ${JSON.stringify(raw)} must start with \`./\` (a bare name needs \`metadata.pluginRoot\`).` });
    return undefined;
  }
  const resolvedPath = resolve(root, relative);
  if (resolvedPath !== root && !resolvedPath.startsWith(root + sep)) {
    diagnostics.push({ severity: 'error', file, path: `plugins[${index}].source`, message: `Source ${JSON.stringify(raw)} escapes the marketplace directory ${root}.` });
    return undefined;
  }
  return { source: 'relative', path: raw, resolvedPath };
}
