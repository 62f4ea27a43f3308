import {
  CommandContribution,
  SkillActivator,
  SkillSourceContribution,
  describeError,
  type ICommandHostContext,
  type ICommandResult,
  type ISkillActivationEvent,
  type SkillEntry,
  type TCommandEffect,
  type ToolSource,
} from '@tessera/contracts';
import type { Session } from '../session.js';
import { SessionBusyError } from '../errors.js';
import { canonicalName, SystemCommandExecutor, type ICommandListing } from './command-executor.js';
import { BuiltinCommandSource, CommandRegistry, SkillCommandSource } from './command-registry.js';
import { commandTools } from './command-tools.js';
import { codeData } from './interactive-session-helpers.js';
import type { InteractiveSession } from './interactive-session.js';
import type { InteractiveSessionOptions } from './interactive-session-options.js';

/**
 * Command effects `InteractiveSession.executeCommand` applies to its own session before it
 * returns the result (the result still lists them, for the host to show).
 */
export const SESSION_APPLIED_EFFECTS: ReadonlySet<TCommandEffect['type']> = new Set(['session-renamed', 'language-change-requested', 'model-change-requested']);

/** What the commands reach of the `InteractiveSession` that owns them (its public methods). */
export type SessionCommandsHost = Pick<
  InteractiveSession,
  'getFullHistory' | 'listCommands' | 'executeSkillCommandByName' | 'listEditCheckpoints' | 'inspectEditCheckpoint' | 'restoreEditCheckpoint' | 'setName' | 'setLanguage' | 'submit'
>;

/**
 * The command and skill plumbing of one `InteractiveSession`, which owns it and delegates to it
 * once its session is ready: the executor and the palette built from the session's
 * `CommandContribution`s, the model's command tools, the host context commands run with, and
 * skill activation.
 */
export class SessionCommands {
  private executor: SystemCommandExecutor | undefined;

  constructor(
    private readonly facade: SessionCommandsHost,
    /** The facade's session; `undefined` until it is ready. */
    private readonly currentSession: () => Session | undefined,
    private readonly options: InteractiveSessionOptions,
  ) {}

  /** Runs a command for `executeCommand` and the command tools (`model-tool`); a skill name runs the `skills` command. */
  async runCommand(session: Session, name: string, args: string, invocation: 'user-slash' | 'model-tool'): Promise<ICommandResult | null> {
    const executor = this.commandExecutor(session);
    const canonical = canonicalName(name);
    if (!executor.has(canonical) && executor.has('skills')) {
      const skill = (await this.skillEntries(session)).find((entry) => entry.id === canonical || entry.qualifiedName === canonical);
      if (skill) return executor.execute('skills', args === '' ? canonical : `${canonical} ${args}`, this.hostContext(session, invocation));
    }
    const result = await executor.execute(canonical, args, this.hostContext(session, invocation));
    return result && this.applySessionEffects(session, result);
  }

  /**
   * Applies the effects that change only this session (`SESSION_APPLIED_EFFECTS`), so every
   * host (terminal, server, ACP, MCP, `createQuery`) gets them alike: `session-renamed` (name,
   * saved), `language-change-requested` (the system prompt's language line, saved) and
   * `model-change-requested` (the model for the calls that follow). The effects stay in the
   * result for the host to show; the rest (exit, picker, reset, plugin manager, status line…)
   * are the host's to apply. One that cannot be applied now (a turn is running) turns the
   * result into a failure that says so.
   */
  private async applySessionEffects(session: Session, result: ICommandResult): Promise<ICommandResult> {
    for (const effect of result.effects ?? []) {
      try {
        if (effect.type === 'session-renamed') await this.facade.setName(effect.name);
        else if (effect.type === 'language-change-requested') await this.facade.setLanguage(effect.language);
        else if (effect.type === 'model-change-requested') session.setModel(effect.modelId);
      } catch (error) {
        const reason = error instanceof SessionBusyError ? 'a turn is running; try again when it ends' : describeError(error);
        return { ...result, success: false, message: `${result.message} Not applied: ${reason}.`, effects: (result.effects ?? []).filter((item) => item !== effect) };
      }
    }
    return result;
  }

  /** Every executable command, sorted by name. */
  listCommands(session: Session): ICommandListing[] {
    return this.commandExecutor(session).listCommands();
  }

  /**
   * The palette (spec: CommandRegistry): the executable commands, the modules' own sources
   * (plugin commands) and the skills as virtual commands, for autocomplete.
   */
  async getCommandRegistry(session: Session): Promise<CommandRegistry> {
    if (!this.registry) {
      const executor = this.commandExecutor(session);
      this.registry = new CommandRegistry();
      this.registry.addSource(new BuiltinCommandSource(executor));
      for (const module of session.services.getAll(CommandContribution)) for (const source of module.commandSources ?? []) this.registry.addSource(source);
      this.registry.addSource(this.skillCommands);
    }
    this.skillCommands.update(await this.skillEntries(session));
    this.registry.invalidate();
    return this.registry;
  }

  private registry: CommandRegistry | undefined;
  private readonly skillCommands = new SkillCommandSource();

  private async skillEntries(session: Session): Promise<SkillEntry[]> {
    const entries: SkillEntry[] = [];
    for (const source of session.services.getAll(SkillSourceContribution)) {
      try {
        entries.push(...(await source.skills({ sessionId: session.sessionId, cwd: session.cwd })));
      } catch (error) {
        session.log('error', { phase: 'skills', source: source.name, error: describeError(error) });
      }
    }
    return entries;
  }

  private commandExecutor(session: Session): SystemCommandExecutor {
    this.executor ??= new SystemCommandExecutor(session.services.getAll(CommandContribution));
    return this.executor;
  }

  /** The model's route to commands: a tool per model-invocable command (none when there is none). */
  readonly toolSource: ToolSource = {
    name: 'commands',
    tools: () => {
      const session = this.currentSession();
      if (!session) return [];
      const descriptors = session.services.getAll(CommandContribution).flatMap((module) => module.commandDescriptors ?? []);
      return commandTools(this.commandExecutor(session), descriptors, (name, args) => this.runCommand(session, name, args, 'model-tool'));
    },
  };

  private hostContext(session: Session, invocation: 'user-slash' | 'model-tool' = 'user-slash'): ICommandHostContext {
    return {
      sessionId: session.sessionId,
      cwd: session.cwd,
      services: session.services,
      invocation,
      getHistory: () => this.facade.getFullHistory(),
      getMessageCount: () => session.getHistory().length,
      getSessionName: () => session.getName(),
      getContextState: () => session.getContextState(),
      getAutoCompactThreshold: () => session.getAutoCompactThreshold(),
      setAutoCompactThreshold: (threshold) => session.setAutoCompactThreshold(threshold),
      compact: (instructions) => session.compact(instructions),
      clearHistory: () => session.clearHistory(),
      getPermissionMode: () => session.getPermissionMode(),
      setPermissionMode: (mode) => session.setPermissionMode(mode),
      allowsPermissionMode: (mode) => session.allowsPermissionMode(mode),
      getModel: () => session.getModel(),
      listCommands: () => this.facade.listCommands(),
      executeSkillCommandByName: (name, args, request) => this.facade.executeSkillCommandByName(name, args, request),
      listEditCheckpoints: () => this.facade.listEditCheckpoints(),
      inspectEditCheckpoint: (id) => this.facade.inspectEditCheckpoint(id),
      restoreEditCheckpoint: (id) => this.facade.restoreEditCheckpoint(id),
      getCommandHostAdapters: () => ({
        // Fields a command keeps with the session (memory events…); saved with the next save.
        sessionRecord: { get: (field: string) => session.getRecordField(field), set: (field: string, value: unknown) => session.setRecordField(field, value) },
        ...this.options.commandHostAdapters,
      }),
    };
  }

  /**
   * Activates a skill (spec: executeSkillCommandByName) through the bound `SkillActivator`:
   * a forked skill answers with the subagent's result; an injected one is returned to the
   * model as instructions (`model-tool`) or submitted into this session (`user-slash`).
   * Every activation is recorded (`skill_activation` event, `skill-activation` timeline entry,
   * `skillActivationEvents` in the record).
   */
  async executeSkillCommandByName(session: Session, name: string, args: string, request: { invocation: 'user-slash' | 'model-tool' }): Promise<ICommandResult> {
    const activator = session.services.getOptional(SkillActivator);
    if (!activator) return { success: false, message: 'Skills are not enabled in this session: add the skills plugin (skills()).' };
    let activation;
    try {
      activation = await activator.activate(name, args, {
        invocation: request.invocation,
        sessionId: session.sessionId,
        cwd: session.cwd,
        services: session.services,
        permissionMode: session.getPermissionMode(),
        onEvent: (event) => this.recordSkillActivation(session, event),
      });
    } catch (error) {
      return { success: false, message: describeError(error), ...codeData(error) };
    }
    const diagnostics = activation.diagnostics.map((diagnostic) => diagnostic.message);
    const extra = diagnostics.length > 0 ? { diagnostics } : {};
    if (activation.mode === 'fork') return { success: true, message: activation.result.text, data: { mode: 'fork', skill: name, agentId: activation.result.agentId }, ...extra };
    if (request.invocation === 'model-tool') return { success: true, message: activation.prompt, data: { mode: 'inject', skill: name }, ...extra };
    // The timeline shows what was typed, and prompt hooks match it; the model gets the skill's prompt.
    const typed = `/${name}${args.trim() === '' ? '' : ` ${args.trim()}`}`;
    const result = await this.facade.submit(activation.prompt, typed, typed);
    return { success: true, message: result?.response ?? '', data: { mode: 'inject', skill: name }, ...extra };
  }

  private recordSkillActivation(session: Session, event: ISkillActivationEvent): void {
    const stored = session.getRecordField('skillActivationEvents');
    session.setRecordField('skillActivationEvents', [...(Array.isArray(stored) ? stored : []), event]);
    // Through the stream, like every event: the timeline entry and the listeners follow from it.
    session.emit({ type: 'skill_activation', event });
  }
}
