import { basename, dirname } from 'node:path';
import {
  Clock,
  SkillForkUnavailableError,
  SkillLoadError,
  SkillNotFoundError,
  SkillNotModelInvocableError,
  SkillSourceContribution,
  SubagentLauncher,
  describeError,
  type ActivatedSkill,
  type Diagnostic,
  type ISkillActivationEvent,
  type SkillActivation,
  type SkillActivationRequest,
  type SkillActivator,
  type SkillEntry,
  type SkillSessionRef,
  type SkillSource,
} from '@tessera/contracts';
import { readCommandFile, readSkillFile, substituteVariables, type PromptFrontmatter } from '@tessera/formats';
import { closeNames } from './close-names.js';
import { expandShellCommands } from './expand-shell-commands.js';

export interface SkillActivatorSettings {
  /** Index of the first argument for `$N` (formats' rule: 0 as in Claude Code today; 1 for older files). */
  readonly positionalBase: 0 | 1;
  readonly shellTimeoutMs: number;
  readonly maxShellOutputChars: number;
}

/** A skill file as read on activation. */
interface LoadedSkill extends PromptFrontmatter {
  readonly body: string;
  readonly bodyLine: number;
  readonly file: string;
  readonly dir: string;
}

/**
 * The default `SkillActivator`. Skills are looked up in the session's skill sources
 * (`request.services`), first source first, so a bundle plugin's file-backed skills
 * activate exactly like folder skills. Nothing is cached here: each activation reads the
 * file again, so an edit takes effect at the next activation.
 */
export class DefaultSkillActivator implements SkillActivator {
  constructor(
    private readonly settings: SkillActivatorSettings,
    /** The kernel's sources, for `list()` calls that bring no session services. */
    private readonly kernelSources: readonly SkillSource[],
  ) {}

  async list(session: SkillSessionRef): Promise<readonly SkillEntry[]> {
    const sources = session.services?.getAll(SkillSourceContribution) ?? this.kernelSources;
    const lists = await Promise.all(sources.map(async (source) => [...(await source.skills({ sessionId: session.sessionId, cwd: session.cwd }))]));
    // First source wins a name, as in the folder source's own precedence.
    const seen = new Set<string>();
    return lists.flat().filter((entry) => {
      const key = entry.qualifiedName ?? entry.id;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  async activate(name: string, args: string, request: SkillActivationRequest): Promise<SkillActivation> {
    const wanted = name.replace(/^\//, '');
    const entries = await this.list(request);
    const entry = entries.find((item) => item.qualifiedName === wanted) ?? entries.find((item) => item.id === wanted);
    if (entry === undefined) {
      const visible = entries.filter((item) => (request.invocation === 'model-tool' ? item.modelInvocable !== false : true));
      throw new SkillNotFoundError(wanted, closeNames(wanted, visible.flatMap((item) => (item.qualifiedName ? [item.qualifiedName, item.id] : [item.id]))));
    }
    if (request.invocation === 'model-tool' && entry.modelInvocable === false) throw new SkillNotModelInvocableError(entry.id, entry.file);

    const loaded = load(entry);
    // The file may have changed since it was listed; its current frontmatter decides.
    if (request.invocation === 'model-tool' && loaded.value.disableModelInvocation) throw new SkillNotModelInvocableError(entry.id, entry.file);
    const skill = activatedSkill(entry, loaded.value);
    const mode = skill.context === 'fork' ? 'fork' : 'inject';
    const emit = (status: ISkillActivationEvent['status'], error?: string): void => {
      if (request.onEvent === undefined) return;
      // The contract says onEvent must not throw; one that does must not fail the activation.
      try {
        request.onEvent({
          type: 'skill-activation',
          skillName: entry.id,
          source: entry.source.startsWith('plugin') ? 'plugin' : 'skill',
          invocation: request.invocation,
          mode,
          status,
          timestamp: new Date(request.services.getOptional(Clock)?.now() ?? Date.now()).toISOString(),
          ...(entry.qualifiedName === undefined ? {} : { qualifiedName: entry.qualifiedName }),
          ...(error === undefined ? {} : { error }),
        });
      } catch {
        // Ignored, see above.
      }
    };

    emit('started');
    try {
      const activation = await this.render(skill, loaded.value, loaded.diagnostics, args, request);
      emit('completed');
      return activation;
    } catch (error) {
      emit('failed', describeError(error));
      throw error;
    }
  }

  private async render(skill: ActivatedSkill, loaded: LoadedSkill, found: readonly Diagnostic[], args: string, request: SkillActivationRequest): Promise<SkillActivation> {
    const diagnostics: Diagnostic[] = [...found];
    const substituted = substituteVariables(loaded.body, {
      arguments: args,
      ...(loaded.argumentNames ? { argumentNames: loaded.argumentNames } : {}),
      positionalBase: this.settings.positionalBase,
      sessionId: request.sessionId,
      skillDir: loaded.dir,
      projectDir: request.cwd,
      ...(skill.pluginRoot === undefined ? {} : { pluginRoot: skill.pluginRoot }),
      ...(skill.pluginData === undefined ? {} : { pluginData: skill.pluginData }),
      ...(loaded.effort === undefined ? {} : { effort: loaded.effort }),
    });
    // After substitution, so the permission check judges the command that will really run.
    const expanded = await expandShellCommands(substituted, {
      file: loaded.file,
      bodyLine: loaded.bodyLine,
      cwd: request.cwd,
      sessionId: request.sessionId,
      services: request.services,
      mode: request.permissionMode ?? 'default',
      timeoutMs: this.settings.shellTimeoutMs,
      maxOutputChars: this.settings.maxShellOutputChars,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    diagnostics.push(...expanded.diagnostics);
    const prompt = expanded.text;
    if (skill.context !== 'fork') return { mode: 'inject', skill, prompt, diagnostics };

    const launcher = request.services.getOptional(SubagentLauncher);
    if (launcher === undefined) throw new SkillForkUnavailableError(skill.id, skill.file);
    const model = skill.model === undefined || skill.model === 'inherit' ? undefined : skill.model;
    const result = await launcher.launch({
      prompt,
      agentType: skill.agent ?? 'general-purpose',
      ...(model === undefined ? {} : { model }),
      parentSessionId: request.sessionId,
      cwd: request.cwd,
      signal: request.signal ?? new AbortController().signal,
      ...(skill.allowedTools === undefined ? {} : { allowedTools: skill.allowedTools }),
      forkWorker: true,
    });
    return { mode: 'fork', skill, prompt, result, diagnostics };
  }
}

/** Reads the entry's file: `SKILL.md` as a skill, anything else as a command file. */
function load(entry: SkillEntry): { value: LoadedSkill; diagnostics: Diagnostic[] } {
  const file = entry.file;
  if (file === undefined) throw new SkillLoadError(entry.id, undefined, 'its source lists no file to read.');
  if (basename(file).toLowerCase() === 'skill.md') {
    const read = readSkillFile(file);
    failOnError(entry, read.diagnostics);
    return { value: read.value, diagnostics: read.diagnostics };
  }
  const read = readCommandFile(file);
  failOnError(entry, read.diagnostics);
  return { value: { ...read.value, dir: dirname(read.value.file) }, diagnostics: read.diagnostics };
}

function failOnError(entry: SkillEntry, diagnostics: readonly Diagnostic[]): void {
  const error = diagnostics.find((diagnostic) => diagnostic.severity === 'error');
  if (error !== undefined) throw new SkillLoadError(entry.id, entry.file, error.message);
}

function activatedSkill(entry: SkillEntry, loaded: LoadedSkill): ActivatedSkill {
  return {
    ...entry,
    modelInvocable: !loaded.disableModelInvocation,
    userInvocable: loaded.userInvocable,
    dir: loaded.dir,
    ...(loaded.context === undefined ? {} : { context: loaded.context }),
    ...(loaded.agent === undefined ? {} : { agent: loaded.agent }),
    ...(loaded.allowedTools === undefined ? {} : { allowedTools: loaded.allowedTools }),
    ...(loaded.model === undefined ? {} : { model: loaded.model }),
  };
}
