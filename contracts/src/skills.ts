import type { Diagnostic } from './diagnostics.js';
import { TesseraError } from './errors.js';
import type { ISkillActivationEvent } from './interactive.js';
import type { PermissionMode } from './permissions.js';
import type { SessionServices } from './session-services.js';
import type { SkillEntry } from './skill-source.js';
import type { SubagentLaunchResult } from './subagent-launcher.js';
import { createToken } from './token.js';

/** Who asked for the skill: a person typing `/name`, or the model through the skills command tool. */
export type SkillInvocation = 'user-slash' | 'model-tool';

/** The session a skill list is made for. */
export interface SkillSessionRef {
  readonly sessionId: string;
  readonly cwd: string;
  /** The session's services; with them the list covers the session's skill sources. */
  readonly services?: SessionServices;
}

/** How and for which session a skill is activated. */
export interface SkillActivationRequest {
  readonly invocation: SkillInvocation;
  readonly sessionId: string;
  readonly cwd: string;
  /**
   * The session's services: skill sources, `PermissionPolicy` (for `` !`cmd` ``),
   * `SubagentLauncher` (for `context: fork`), `Clock`.
   */
  readonly services: SessionServices;
  /** The mode `` !`cmd` `` is judged in, as the session's tool calls would be. Default `default`. */
  readonly permissionMode?: PermissionMode;
  /** Aborts running `` !`cmd` `` commands and a forked subagent. */
  readonly signal?: AbortSignal;
  /**
   * Told `started` and then `completed` or `failed` for each activation that got past the
   * name and invocation checks. The caller records it (as a `skill_activation` session event).
   * Must not throw.
   */
  readonly onEvent?: (event: ISkillActivationEvent) => void;
}

/** The skill as loaded on activation: its list entry and what its frontmatter asks for. */
export interface ActivatedSkill extends SkillEntry {
  /** The directory `${CLAUDE_SKILL_DIR}` names (a command file's folder for commands). */
  readonly dir?: string;
  readonly context?: 'fork';
  /** Agent type for `context: fork`. */
  readonly agent?: string;
  /** `allowed-tools`, as written. */
  readonly allowedTools?: readonly string[];
  readonly model?: string;
}

/** The rendered prompt goes into the current session (the caller submits it or returns it to the model). */
export interface SkillInjectActivation {
  readonly mode: 'inject';
  readonly skill: ActivatedSkill;
  readonly prompt: string;
  /** Located findings: frontmatter problems, shell commands not run and why. */
  readonly diagnostics: readonly Diagnostic[];
}

/** The rendered prompt ran in a subagent; `result` is its answer. */
export interface SkillForkActivation {
  readonly mode: 'fork';
  readonly skill: ActivatedSkill;
  /** What the subagent was given. */
  readonly prompt: string;
  readonly result: SubagentLaunchResult;
  readonly diagnostics: readonly Diagnostic[];
}

/** The outcome of an activation: a prompt to inject, or a forked subagent's answer. */
export type SkillActivation = SkillInjectActivation | SkillForkActivation;

/**
 * Lists and activates skills: finds the named skill in the skill sources, checks who may
 * invoke it, loads the full file, substitutes arguments, runs `` !`cmd` `` lines the session's
 * permission rules allow, and injects the prompt or forks it into a subagent.
 */
export interface SkillActivator {
  /** The skills available to the session, from every skill source it sees. */
  list(session: SkillSessionRef): Promise<readonly SkillEntry[]>;
  /**
   * Rejects with `SkillNotFoundError`, `SkillNotModelInvocableError`, `SkillLoadError` or
   * `SkillForkUnavailableError`; a forked subagent's failure rejects with the launcher's error.
   */
  activate(name: string, args: string, request: SkillActivationRequest): Promise<SkillActivation>;
}

/**
 * The skill activator, bound by `skills()`. Optional: `/skills`, skill slash commands and the
 * interactive session's `executeSkillCommandByName` report skills as disabled without it.
 */
export const SkillActivator = createToken<SkillActivator>('SkillActivator');

/** No skill source lists the name. `details.suggestions` holds close names. */
export class SkillNotFoundError extends TesseraError {
  readonly suggestions: readonly string[];
  constructor(name: string, suggestions: readonly string[]) {
    const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((item) => `"${item}"`).join(', ')}?` : ' List the skills to see the names.';
    super(`No skill named "${name}".${hint}`, {
      code: 'skill_not_found',
      category: 'validation',
      recoverable: true,
      details: { name, suggestions: [...suggestions] },
    });
    this.suggestions = suggestions;
  }
}

/** The model asked for a skill whose frontmatter says `disable-model-invocation: true`. */
export class SkillNotModelInvocableError extends TesseraError {
  constructor(name: string, file: string | undefined) {
    super(`Skill "${name}" has \`disable-model-invocation: true\`: only the user can run it (type /${name}).`, {
      code: 'skill_not_model_invocable',
      category: 'permission',
      recoverable: true,
      details: { name, ...(file === undefined ? {} : { file }) },
    });
  }
}

/** The skill is listed but its file cannot be read (deleted since, unreadable, or none). */
export class SkillLoadError extends TesseraError {
  constructor(name: string, file: string | undefined, reason: string) {
    super(`Skill "${name}" could not be loaded${file === undefined ? '' : ` from ${file}`}: ${reason}`, {
      code: 'skill_not_loadable',
      category: 'io',
      recoverable: true,
      details: { name, ...(file === undefined ? {} : { file }) },
    });
  }
}

/** A `context: fork` skill was activated but no plugin binds `SubagentLauncher`. */
export class SkillForkUnavailableError extends TesseraError {
  constructor(name: string, file: string | undefined) {
    super(`Skill "${name}" runs in a subagent (\`context: fork\`), but no SubagentLauncher is bound; compose the subagents() plugin, or remove \`context: fork\` to run it inline.`, {
      code: 'skill_fork_unavailable',
      category: 'configuration',
      recoverable: false,
      details: { name, ...(file === undefined ? {} : { file }) },
    });
  }
}
