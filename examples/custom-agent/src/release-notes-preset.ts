import { cliPreset, type CliPresetOptions } from '@tessera/preset-cli';
import type { PluginInput } from '@tessera/kernel';
import { GIT_LOG_RULE, gitLog } from './git-log-tool.js';
import { releaseNotesCommand } from './release-notes-command.js';
import { releaseNotesStyle } from './release-notes-style.js';
import { sqliteSessionStore } from './sqlite-session-store.js';

export interface ReleaseNotesPresetOptions extends CliPresetOptions {
  /** The SQLite file sessions are kept in. */
  database: string;
}

/**
 * relnotes: the tessera CLI preset with its session store replaced by SQLite, the GitLog tool
 * (allowed by a shipped rule), the `/release-notes` command and the style guide added.
 * Composition only, like `cliPreset` itself.
 */
export function releaseNotesPreset({ database, ...options }: ReleaseNotesPresetOptions): PluginInput[] {
  const rules = options.permissions ?? {};
  return cliPreset({
    ...options,
    permissions: { ...rules, allow: [GIT_LOG_RULE, ...(rules.allow ?? [])] },
    replace: [sqliteSessionStore({ path: database }), ...(options.replace ?? [])],
    plugins: [gitLog(), releaseNotesCommand(), releaseNotesStyle(), ...(options.plugins ?? [])],
  });
}
