import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Diagnostic, ParseResult } from '@tessera/contracts';
import { zodDiagnostics } from '@tessera/formats';
import { z } from 'zod';

/** A plugin reference: a package name, `[name, options]`, or (in JS configs) a plugin object. */
const pluginReference = z.union([
  z.string().min(1),
  z.tuple([z.string().min(1), z.record(z.string(), z.unknown())]),
  z.looseObject({ name: z.string().min(1) }),
]);

export const compositionConfigSchema = z.object({
  $schema: z.string().optional(),
  /** Package name of the preset the product starts from (e.g. `@tessera/preset-cli`). */
  preset: z.string().min(1).optional(),
  /** Extra plugins, appended after the preset's. */
  plugins: z.array(pluginReference).optional(),
  /** Plugin names (as registered) to leave out of the preset. */
  exclude: z.array(z.string().min(1)).optional(),
  /** Free-form options passed to the preset factory. */
  options: z.record(z.string(), z.unknown()).optional(),
});

export type CompositionConfig = z.infer<typeof compositionConfigSchema>;

export interface LoadedCompositionConfig extends ParseResult<CompositionConfig | undefined> {
  /** The file the configuration came from; undefined when none was found. */
  file?: string;
}

const MODULE_NAME = 'tessera';
/** `tessera.config.ts` is left out: Node 20 cannot load TypeScript without an extra loader. */
const SEARCH_PLACES = [
  'package.json',
  `.${MODULE_NAME}rc`,
  `.${MODULE_NAME}rc.json`,
  `.${MODULE_NAME}rc.yaml`,
  `.${MODULE_NAME}rc.yml`,
  `.${MODULE_NAME}rc.js`,
  `.${MODULE_NAME}rc.mjs`,
  `.${MODULE_NAME}rc.cjs`,
  `${MODULE_NAME}.config.js`,
  `${MODULE_NAME}.config.mjs`,
  `${MODULE_NAME}.config.cjs`,
  `${MODULE_NAME}.config.json`,
];

/**
 * Finds the product composition (which preset, which extra plugins) with cosmiconfig:
 * a `tessera` key in package.json, `.tesserarc*`, or `tessera.config.{js,mjs,cjs,json}`,
 * searching from cwd up to the nearest package.json. Never throws; a config that fails to
 * load or validate is reported with its file and JSON path.
 */
export async function loadCompositionConfig(cwd: string): Promise<LoadedCompositionConfig> {
  const directory = resolve(cwd);
  const diagnostics: Diagnostic[] = [];
  const typescriptConfig = join(directory, `${MODULE_NAME}.config.ts`);
  if (existsSync(typescriptConfig)) {
    diagnostics.push({
      severity: 'error',
      file: typescriptConfig,
      message: 'tessera.config.ts is not supported on Node 20 without a TypeScript loader; rename it to tessera.config.mjs (plain JavaScript) or use tessera.config.json.',
    });
  }
  // Loaded on demand: cosmiconfig and its loaders cost more start-up time than the rest of this package.
  const { cosmiconfig } = await import('cosmiconfig');
  const explorer = cosmiconfig(MODULE_NAME, { searchPlaces: SEARCH_PLACES, searchStrategy: 'project', cache: false });
  let found: { config: unknown; filepath: string; isEmpty?: boolean } | null;
  try {
    found = await explorer.search(directory);
  } catch (error) {
    const file = (error as { filepath?: string }).filepath ?? directory;
    const position = /line (\d+),? column (\d+)/i.exec((error as Error).message);
    const diagnostic: Diagnostic = { severity: 'error', file, message: `Cannot load the composition config: ${(error as Error).message.split('\n')[0]}` };
    if (position) {
      diagnostic.line = Number(position[1]);
      diagnostic.column = Number(position[2]);
    }
    return { value: undefined, diagnostics: [...diagnostics, diagnostic] };
  }
  if (found === null) return { value: undefined, diagnostics };
  const raw = found.config === undefined || found.isEmpty ? {} : found.config;
  const parsed = compositionConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const prefix = found.filepath.endsWith('package.json') ? MODULE_NAME : '';
    return { value: undefined, file: found.filepath, diagnostics: [...diagnostics, ...zodDiagnostics(parsed.error, found.filepath, prefix, 'composition setting')] };
  }
  if (raw !== null && typeof raw === 'object') {
    for (const key of Object.keys(raw)) {
      if (!(key in compositionConfigSchema.shape)) {
        diagnostics.push({ severity: 'warning', file: found.filepath, path: key, message: `Unknown composition key \`${key}\`; expected preset, plugins, exclude or options.` });
      }
    }
  }
  return { value: parsed.data, file: found.filepath, diagnostics };
}
