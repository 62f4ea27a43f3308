import { homedir } from 'node:os';
import { Clock, Diagnostics, PermissionPolicy, SETTING_SOURCES, isSettingSourceList, SkillActivator, SkillSourceContribution, SubagentLauncher, type DiagnosticsReporter, type SettingSource, type SkillSource } from '@tessera/contracts';
import { PluginOptionsError, definePlugin, type Plugin } from '@tessera/kernel';
import { DefaultSkillActivator } from './default-skill-activator.js';
import { FolderSkillSource } from './folder-skill-source.js';

export interface SkillsPluginOptions {
  /** The user folder holding `.tessera/skills` and `.claude/skills`. Default `os.homedir()`, read when the source is built. */
  home?: string;
  /**
   * Claude Code's `settingSources`: only the skill folders of these sources are read —
   * `project`: `.tessera/skills`, `.agents/skills`, `.claude/skills`, `.claude/commands`;
   * `user`: `~/.tessera/skills`, `~/.claude/skills`. `local` has no skill folder. `[]`: none
   * (bundle plugins' skills come from their own source). Default: all of them.
   */
  settingSources?: readonly SettingSource[];
  /** Index of the first argument for `$N`: 0 (default, Claude Code today: `$0` is the first word) or 1 (older files). */
  positionalBase?: 0 | 1;
  /** A `` !`cmd` `` is killed after this long. Default 10,000 ms. */
  shellTimeoutMs?: number;
  /** A `` !`cmd` ``'s output beyond this many characters is dropped, with a marker. Default 30,000. */
  maxShellOutputChars?: number;
}

const NAME = 'skills';
const FACTORY = 'skills()';

/**
 * Skills from the project and user folders, and their activation: contributes a folder
 * `SkillSource` and provides `SkillActivator`. The factory only checks its options; each
 * kernel's container builds its own source (with its own cache) and activator.
 */
export function skills(options: SkillsPluginOptions = {}): Plugin {
  check(options);
  const settings = {
    positionalBase: options.positionalBase ?? 0,
    shellTimeoutMs: options.shellTimeoutMs ?? 10_000,
    maxShellOutputChars: options.maxShellOutputChars ?? 30_000,
  } as const;
  const home = options.home;
  const sources = options.settingSources?.filter((source): source is 'user' | 'project' => source !== 'local');
  return definePlugin({
    name: NAME,
    provides: [SkillActivator],
    contributes: [SkillSourceContribution],
    // Read per activation from the session's services.
    optional: [Diagnostics, PermissionPolicy, SubagentLauncher, Clock],
    register({ bind }) {
      bind(SkillSourceContribution)
        .toResolvedValue(
          (diagnostics: DiagnosticsReporter | undefined) => new FolderSkillSource({ home: home ?? homedir(), ...(sources === undefined ? {} : { sources }), ...(diagnostics ? { diagnostics } : {}) }),
          [{ serviceIdentifier: Diagnostics, optional: true }],
        )
        .inSingletonScope();
      bind(SkillActivator)
        .toResolvedValue(
          (sources: SkillSource[] | undefined) => new DefaultSkillActivator(settings, sources ?? []),
          [{ serviceIdentifier: SkillSourceContribution, isMultiple: true, optional: true }],
        )
        .inSingletonScope();
    },
  });
}

function check(options: SkillsPluginOptions): void {
  const fail = (option: string, problem: string): never => {
    throw new PluginOptionsError(FACTORY, NAME, option, problem);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'must be an object');
  if (options.home !== undefined && (typeof options.home !== 'string' || options.home === '')) fail('home', 'must be a non-empty path');
  const sources = options.settingSources;
  if (sources !== undefined && !isSettingSourceList(sources)) {
    fail('settingSources', `must be a list of ${SETTING_SOURCES.join(', ')} (the sources whose skill folders are read)`);
  }
  if (options.positionalBase !== undefined && options.positionalBase !== 0 && options.positionalBase !== 1) fail('positionalBase', `must be 0 or 1 (got ${String(options.positionalBase)})`);
  for (const key of ['shellTimeoutMs', 'maxShellOutputChars'] as const) {
    const value = options[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value > 0)) fail(key, `must be a positive integer (got ${String(value)})`);
  }
}
