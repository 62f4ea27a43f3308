/**
 * Claude Code's setting sources (`--setting-sources`, the Agent SDK's `settingSources`): the
 * scopes whose settings files, instruction files (CLAUDE.md), skills and agents are read.
 * `user` is the home folder's, `project` the shared project files, `local` the project's
 * personal ones (`settings.local.json`, `CLAUDE.local.md`).
 */
export type SettingSource = 'user' | 'project' | 'local';

/** Every setting source, in the order Claude Code lists them (lowest precedence first). */
export const SETTING_SOURCES: readonly SettingSource[] = Object.freeze(['user', 'project', 'local'] as const);

/** True when `value` is a list of setting sources (a plugin option checked before it is used). */
export function isSettingSourceList(value: unknown): value is readonly SettingSource[] {
  return Array.isArray(value) && value.every((source) => (SETTING_SOURCES as readonly unknown[]).includes(source));
}
