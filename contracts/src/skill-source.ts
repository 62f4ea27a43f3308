import { createToken } from './token.js';

/** What a skill list shows before the skill is activated (the full SKILL.md is read then). */
export interface SkillEntry {
  /** The command name (a skill's directory name). */
  id: string;
  /** Display label. */
  name: string;
  description: string;
  /** `project`, `user`, `plugin:<name>`… */
  source: string;
  /** `plugin:skill` when a bundle plugin contributed it. */
  qualifiedName?: string;
  /** Absolute path of SKILL.md, when it is a file. */
  file?: string;
  argumentHint?: string;
  /** False hides it from slash menus. */
  userInvocable?: boolean;
  /** False hides it from the model's skill list. */
  modelInvocable?: boolean;
  /** A bundle plugin's folder and data folder: `${CLAUDE_PLUGIN_ROOT}` / `${CLAUDE_PLUGIN_DATA}` in the body. */
  pluginRoot?: string;
  pluginData?: string;
}

/**
 * Skills that are found rather than composed: a folder scan, a bundle plugin, a marketplace.
 * Asked per session; a source that can change says so through `onChange`.
 */
export interface SkillSource {
  readonly name: string;
  /** The skills this source offers the session now. */
  skills(session: { readonly sessionId: string; readonly cwd: string }): readonly SkillEntry[] | Promise<readonly SkillEntry[]>;
  /** Calls `listener` whenever the answer of `skills()` may have changed; returns an unsubscribe. */
  onChange?(listener: () => void): () => void;
}

/** Contribution point: every skill source bound here feeds the sessions' skill lists. */
export const SkillSourceContribution = createToken<SkillSource>('SkillSource');
