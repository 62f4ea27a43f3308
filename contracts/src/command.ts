import type { IContextWindowState } from './context-window.js';
import type { IHistoryEntry } from './history.js';
import type { SessionEndReason } from './hook-payloads.js';
import type { SessionServices } from './session-services.js';
import type { PermissionMode } from './permissions.js';
import type { IEditCheckpointInspection, IEditCheckpointRestoreResult, IEditCheckpointSummary } from './interactive.js';
import { createToken } from './token.js';

/**
 * The command API (spec: Command API Layer). Command ids are slash-free (`compact`, `skills`);
 * the slash belongs to UIs and transports. Commands are contributed as `ICommandModule`s
 * through `CommandContribution`; the kernel refuses two executable commands with one name.
 */

/** How much a command may change: `read-only` never writes, `write` changes session or files, `destructive` cannot be undone. */
export type TCapabilitySafety = 'read-only' | 'write' | 'destructive';

/** A palette / autocomplete entry (spec: ICommand). */
export interface ICommand {
  name: string;
  description: string;
  /** Where it came from: `builtin`, `skill`, `plugin:<name>`, a module name… */
  source: string;
  argumentHint?: string;
  subcommands?: readonly ICommand[];
}

/** Supplies palette entries; dynamic sources (skills, plugin commands) may change between calls. */
export interface ICommandSource {
  readonly name: string;
  /** The entries this source offers now. */
  getCommands(): readonly ICommand[];
}

/** What a model-invocable command looks like to the model (projected as `tessera_command_<name>`). */
export interface ICapabilityDescriptor {
  name: string;
  description: string;
  /** When the model should (and should not) call it. */
  usage?: string;
  argumentHint?: string;
  safety?: TCapabilitySafety;
}

/** What a command module needs of the session: `agent-executor` means it runs subagents, so agents are listed in the system prompt. */
export type TCommandModuleSessionRequirement = 'agent-executor';

/** A JSON value, as command results carry them in `data`. */
export type TCommandResultDataValue = string | number | boolean | null | readonly TCommandResultDataValue[] | { readonly [key: string]: TCommandResultDataValue };

/** Status-line settings a command asks the host to change; fields left out stay as they are. */
export interface TStatusLineCommandSettingsPatch {
  enabled?: boolean;
  showGitBranch?: boolean;
  [setting: string]: unknown;
}

/** Host actions a command asks for; the host applies them (spec: TCommandEffect). */
export type TCommandEffect =
  | { type: 'model-change-requested'; modelId: string }
  | { type: 'language-change-requested'; language: string }
  | { type: 'settings-reset-requested' }
  | { type: 'session-exit-requested'; reason?: SessionEndReason; message?: string }
  | { type: 'session-restart-requested'; reason: SessionEndReason; message: string }
  | { type: 'plugin-tui-requested' }
  | { type: 'plugin-registry-reload-requested' }
  | { type: 'session-picker-requested' }
  | { type: 'session-renamed'; name: string }
  | { type: 'conversation-history-cleared' }
  | { type: 'statusline-settings-patch'; patch: TStatusLineCommandSettingsPatch }
  /** Send `text` to the model as the user's next prompt (an MCP server's prompt, a template). */
  | { type: 'prompt-submit-requested'; text: string };

/** A follow-up prompt a host renders (a choice or a line of text), then answers with `submit`. */
export type ICommandInteractionPrompt =
  | {
      kind: 'choice';
      title: string;
      description?: string;
      choices: ReadonlyArray<{ value: string; label: string; description?: string }>;
    }
  | {
      kind: 'text';
      title: string;
      description?: string;
      placeholder?: string;
      /** Hide what is typed (keys, tokens). */
      masked?: boolean;
      /** A regular expression the answer must match, with the message shown when it does not. */
      validation?: { pattern: string; message: string };
    };

/** A command that needs an answer before it can finish: the host shows `prompt`, then calls `submit` or `cancel`. */
export interface ICommandInteraction {
  prompt: ICommandInteractionPrompt;
  /** Continues the command with the user's answer; the result may ask again through its own `interaction`. */
  submit(value: string): Promise<ICommandResult> | ICommandResult;
  /** The user dismissed the prompt. Without it, the host just drops the interaction. */
  cancel?(): Promise<ICommandResult> | ICommandResult;
}

/**
 * What a command returns: a message for the user, structured `data` for transports, `effects`
 * for the host to apply, and an `interaction` when it needs an answer first. A command reports
 * failure with `success: false` rather than throwing.
 */
export interface ICommandResult {
  message: string;
  success: boolean;
  data?: Record<string, TCommandResultDataValue>;
  effects?: readonly TCommandEffect[];
  interaction?: ICommandInteraction;
  /** Problems worth showing beside the message (a file that did not parse, a skipped entry). */
  diagnostics?: readonly string[];
}

/**
 * Adapters the host lends commands (settings persistence, process lifecycle, plugin
 * management…), each under its own name; a command asks only for the one it needs.
 */
export interface ICommandHostAdapters {
  readonly [adapter: string]: unknown;
}

/** A command as a host lists it. */
export interface ICommandInfo {
  name: string;
  description: string;
  argumentHint?: string;
  userInvocable: boolean;
  /** False for a `host` command, whatever it declares: a model never changes the host. */
  modelInvocable: boolean;
  /** `host` when the command acts on the whole process (see {@link TCommandScope}); absent for a session command. */
  scope?: 'host';
  /** The module (or source) it came from. */
  source: string;
}

/**
 * The narrow facade a command gets: never the interactive session object, never the terminal.
 * Memory stores, background tasks and the subagent launcher are services (`services.get`);
 * host actions (exit, model switch, pickers) are effects in the result.
 */
export interface ICommandHostContext {
  readonly sessionId: string;
  readonly cwd: string;
  /** The session's services by token (permission policy, stores, background tasks…). */
  readonly services: SessionServices;
  /** Who asked: a person typing `/name`, or the model through `tessera_command_<name>`. */
  readonly invocation?: 'user-slash' | 'model-tool';
  /** The session's timeline, events included, oldest first. */
  getHistory(): readonly IHistoryEntry[];
  /** Messages the model sees (user, assistant and tool messages). */
  getMessageCount?(): number;
  /** The user-facing session name, if one was given. */
  getSessionName?(): string | undefined;
  /** Context-window usage; `undefined` when the session tracks none. */
  getContextState(): IContextWindowState | undefined;
  /** The fraction of the window that triggers auto-compaction; `false` when it is off. */
  getAutoCompactThreshold?(): number | false;
  /** Sets the auto-compaction threshold, a fraction in (0, 1], or turns it off with `false`; throws for other values. */
  setAutoCompactThreshold?(threshold: number | false): void;
  /** Replaces the conversation with a summary; rejects, leaving history as it was, when summarising fails. */
  compact?(instructions?: string): Promise<void>;
  /** Empties the conversation. */
  clearHistory?(): void;
  /** The session's current permission mode. */
  getPermissionMode?(): PermissionMode;
  /** Switches the permission mode for the following tool calls; throws for a mode the host does not allow. */
  setPermissionMode?(mode: PermissionMode): void;
  /** Whether the host allows switching to `mode` (a server may refuse `bypassPermissions`); absent means every mode. */
  allowsPermissionMode?(mode: PermissionMode): boolean;
  /** The model the next call uses, when known. */
  getModel(): string | undefined;
  /** Every command the session offers, for help and palettes. */
  listCommands?(): readonly ICommandInfo[];
  /** This session's edit checkpoints; `[]` without the checkpoints plugin. */
  listEditCheckpoints?(): Promise<IEditCheckpointSummary[]>;
  /** The files a checkpoint holds; rejects when checkpoints are not enabled or the id is unknown. */
  inspectEditCheckpoint?(checkpointId: string): Promise<IEditCheckpointInspection>;
  /** Restores files to a checkpoint; rejects with `CheckpointRestoreBusyError` while a prompt runs. */
  restoreEditCheckpoint?(checkpointId: string): Promise<IEditCheckpointRestoreResult>;
  /** Activates a skill (spec: executeSkillCommandByName): injects or forks it and records the activation. */
  executeSkillCommandByName?(name: string, args: string, request: { invocation: 'user-slash' | 'model-tool' }): Promise<ICommandResult>;
  /** The adapters the host lends (see {@link ICommandHostAdapters}); a command checks for the one it needs. */
  getCommandHostAdapters(): ICommandHostAdapters;
}

/**
 * What a command acts on. `session` (the default): the session it runs in. `host`: the whole
 * process, so every session in it (installing or reloading bundle plugins, resetting the user
 * settings). A host command is never offered to a model, and a transport whose clients share
 * the host (the server's REST and WebSocket clients) refuses it; the terminal and a local
 * editor, whose user owns the host, run it.
 */
export type TCommandScope = 'session' | 'host';

/** An executable command (spec: ISystemCommand). */
export interface ISystemCommand {
  name: string;
  description: string;
  modelInvocable?: boolean;
  userInvocable?: boolean;
  /** Default `session`; see {@link TCommandScope}. */
  scope?: TCommandScope;
  argumentHint?: string;
  safety?: TCapabilitySafety;
  subcommands?: readonly ICommand[];
  lifecycle?: 'inline' | 'blocking' | 'background';
  /** Runs the command with the raw text after its name and returns its result. */
  execute(context: ICommandHostContext, args: string): Promise<ICommandResult> | ICommandResult;
}

/** A unit of command composition (spec: ICommandModule). */
export interface ICommandModule {
  name: string;
  commandSources?: readonly ICommandSource[];
  systemCommands?: readonly ISystemCommand[];
  commandDescriptors?: readonly ICapabilityDescriptor[];
  sessionRequirements?: readonly TCommandModuleSessionRequirement[];
}

/** Contribution point: command modules (one plugin per slash command contributes one module). */
export const CommandContribution = createToken<ICommandModule>('CommandContribution');
