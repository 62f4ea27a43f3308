import type { IContextWindowState } from './context-window.js';
import type { IHistoryEntry } from './history.js';
import type { SessionServices } from './session-services.js';
import { TesseraError } from './errors.js';
import { createToken } from './token.js';

/**
 * What the interactive layer (`InteractiveSession`, `createQuery`, transports) shows and
 * keeps, and the services it reaches through tokens: the system prompt builder and edit
 * checkpoints. Names follow the spec (IToolState, IExecutionResult, IUsageSnapshot…).
 */

/** One line of an Edit diff for display. */
export interface IDiffLine {
  type: 'hunk' | 'context' | 'remove' | 'add';
  text: string;
  /** 1-based line in the old / new file, where it applies. */
  oldLine?: number;
  newLine?: number;
}

/** One tool call as a UI shows it (spec: IToolState). */
export interface IToolState {
  toolCallId: string;
  toolName: string;
  /** The call's main argument for a one-line summary (a path, a command, a pattern, a URL). */
  firstArg: string;
  isRunning: boolean;
  result?: 'success' | 'error' | 'denied';
  /** The runtime's or tool's code for a failure (`denied`, `unknown_tool`, `tool_error`…). */
  errorCode?: string;
  denied?: boolean;
  /** Completed Edit calls: the file and its diff lines. */
  diffFile?: string;
  diffLines?: IDiffLine[];
  /** Command tools: the (already bounded) output, for previews. */
  toolResultData?: string;
  /** Completed TodoWrite calls: the list as the call left it (at most 100 items). */
  todos?: ReadonlyArray<{ content: string; status: 'pending' | 'in_progress' | 'completed'; activeForm?: string }>;
}

/** A finished tool call as an execution result lists it (spec: IToolSummary); same shape as {@link IToolState}. */
export type IToolSummary = IToolState;

/** Usage of one turn (spec: IUsageSnapshot). */
export interface IUsageSnapshot {
  /** `exact` when every model call of the turn reported its usage; `estimated` when some did not (the sums are then partial). */
  kind: 'exact' | 'estimated';
  scope: 'turn';
  totalTokens: number;
  /** Every prompt token the model calls processed: uncached input plus cache reads and writes. */
  promptTokens?: number;
  completionTokens?: number;
  /** The part of `promptTokens` read from the provider's prompt cache. */
  cacheReadTokens?: number;
  /** The part of `promptTokens` written to the provider's prompt cache. */
  cacheWriteTokens?: number;
  contextUsedTokens: number;
  contextMaxTokens: number;
  contextUsedPercentage: number;
  costStatus: 'unknown' | 'estimated' | 'exact';
}

/** What a completed (or interrupted) prompt produced (spec: IExecutionResult). */
export interface IExecutionResult {
  response: string;
  history: IHistoryEntry[];
  toolSummaries: IToolSummary[];
  contextState: IContextWindowState;
  usage?: IUsageSnapshot;
}

/** A skill activation (spec: ISkillActivationEvent). Only real activations produce one. */
export interface ISkillActivationEvent {
  readonly type: 'skill-activation';
  readonly skillName: string;
  readonly source: 'skill' | 'plugin';
  readonly invocation: 'user-slash' | 'model-tool';
  readonly mode: 'inject' | 'fork';
  readonly status: 'started' | 'completed' | 'failed';
  readonly timestamp: string;
  readonly qualifiedName?: string;
  readonly error?: string;
}

/** One `@file` reference that was read for the model (never its contents). */
export interface IPromptFileReferenceRecord {
  /** Absolute path of the file read. */
  sourcePath: string;
  /** The path relative to the workspace root it lies in. */
  relativePath: string;
  /** The reference as written (`@docs/spec.md`, `@"my notes.md"`). */
  originalReference: string;
  /** `prompt` for a reference in the prompt; `nested` for one found inside a referenced file. */
  reason: 'prompt' | 'nested';
  /** 0 for the prompt's own references, 1 for references inside those, … */
  depth: number;
  byteLength: number;
}

// ---------------------------------------------------------------- system prompt

/** The system prompt's line naming the language replies are written in (settings.json `language`, `/language`). */
export function responseLanguageLine(language: string): string {
  return `- Response language: ${language}`;
}

const RESPONSE_LANGUAGE_LINE = /^- Response language: .*$/m;

/**
 * `prompt` with its response-language line set to `language`: the line is replaced where the
 * prompt has one (the built prompt's environment section), else added at the end. Everything
 * else in the prompt is kept as it is.
 */
export function withResponseLanguage(prompt: string, language: string): string {
  const line = responseLanguageLine(language.replace(/\s+/g, ' ').trim());
  if (RESPONSE_LANGUAGE_LINE.test(prompt)) return prompt.replace(RESPONSE_LANGUAGE_LINE, () => line);
  return prompt.trim() === '' ? line : `${prompt.trimEnd()}\n\n${line}`;
}


/** What the system prompt is built for. */
export interface SystemPromptRequest {
  cwd: string;
  sessionId?: string;
  model?: string;
  /** The session's services: skills, agents, memory and the like are found through them. */
  services: SessionServices;
  /** Replaces the built-in base prompt. */
  basePrompt?: string;
  /** Appended last (`--append-system-prompt`). */
  appendSystemPrompt?: string;
}

/** A built system prompt with what went into it. */
export interface SystemPromptResult {
  /** The prompt text: the same inputs always give the same text. */
  prompt: string;
  /** Sections in order, with their sizes (for `/context` and `doctor`). */
  sections: ReadonlyArray<{ name: string; chars: number }>;
  /** Context files read (CLAUDE.md, AGENTS.md, …), and whether each was cut to the limit. */
  contextFiles: ReadonlyArray<{ path: string; bytes: number; truncated: boolean }>;
  /** The "Compact Instructions" section of a context file, for compaction. */
  compactInstructions?: string;
}

/** Builds the system prompt of a session (a plugin provides it; a test swaps it). */
export interface SystemPromptBuilder {
  /** Builds the prompt for one session; the same request and files give the same text. */
  build(request: SystemPromptRequest): Promise<SystemPromptResult>;
}

/**
 * The system prompt builder, bound by `systemPrompt()`. The interactive session uses it when it
 * creates a session; optional: without it sessions start with no system prompt of their own.
 */
export const SystemPromptBuilder = createToken<SystemPromptBuilder>('SystemPromptBuilder');

// ---------------------------------------------------------------- edit checkpoints

/** A turn checkpoint as `list` returns it. */
export interface IEditCheckpointSummary {
  /** `<sequence>-<turnId>`: sorts in turn order. */
  id: string;
  sessionId: string;
  /** 1 for the session's first turn checkpoint, then 2, 3… */
  sequence: number;
  /** The prompt that opened the turn (first line, bounded). */
  prompt: string;
  createdAt: string;
  /** Set once the turn finished. */
  finalizedAt?: string;
  /** Files captured before their first change in the turn. */
  fileCount: number;
}

/** One file a checkpoint captured before the turn changed it. */
export interface IEditCheckpointFile {
  /** Absolute path. */
  path: string;
  /** Path relative to the session cwd when inside it, else the absolute path. */
  displayPath: string;
  /** False when the turn created the file (restoring deletes it). */
  existed: boolean;
  /** Whether the pre-image is on disk and readable. */
  snapshotAvailable: boolean;
  bytes?: number;
}

/** A checkpoint's files and what restoring to it would roll back. */
export interface IEditCheckpointInspection {
  checkpoint: IEditCheckpointSummary;
  files: IEditCheckpointFile[];
  /** Restoring to this checkpoint rolls these back, newest first (this one last). */
  rollback: string[];
  /** Checkpoints that stay (older than this one). */
  kept: string[];
}

/** What a restore did: files written back, files deleted (created in the turns undone), checkpoints removed. */
export interface IEditCheckpointRestoreResult {
  checkpointId: string;
  restoredFiles: string[];
  deletedFiles: string[];
  /** Checkpoint directories removed (this one and every later one). */
  removedCheckpoints: string[];
}

/**
 * Turn checkpoints of file edits (spec: Edit Checkpointing). The interactive session opens a
 * turn before each prompt and closes it after; the provider of this service captures files
 * before their first change in the turn (Write, Edit and edit-family tools).
 */
export interface EditCheckpoints {
  /** Opens the checkpoint for a turn about to run `prompt` and returns it; `cwd` must be absolute. */
  beginTurn(session: { sessionId: string; cwd: string }, prompt: string): Promise<IEditCheckpointSummary>;
  /** Closes the session's open turn, if any; later changes are no longer captured. */
  finalizeTurn(sessionId: string): Promise<void>;
  /**
   * Closes the session's open turn and removes its checkpoint when the turn changed no file (a
   * prompt blocked before the model saw it); resolves true when it was removed. A turn that
   * captured a file is finalised instead. Optional: without it the host finalises.
   */
  discardTurn?(sessionId: string): Promise<boolean>;
  /** The session's checkpoints, oldest first. */
  list(sessionId: string): Promise<IEditCheckpointSummary[]>;
  /** Describes one checkpoint; rejects for an id the session does not have. */
  inspect(sessionId: string, checkpointId: string): Promise<IEditCheckpointInspection>;
  /**
   * Puts files back as they were before the checkpoint's turn, undoing later turns too, and
   * removes those checkpoints. Rejects with {@link CheckpointRestoreBusyError} while a turn is open.
   */
  restore(sessionId: string, checkpointId: string): Promise<IEditCheckpointRestoreResult>;
}

/** The edit checkpoint service, bound by `editCheckpoints()`. Optional: without it no turn is checkpointed and `/rewind` says so. */
export const EditCheckpoints = createToken<EditCheckpoints>('EditCheckpoints');

/** A restore asked for while a prompt runs (the session's, or its open turn checkpoint's). */
export class CheckpointRestoreBusyError extends TesseraError {
  constructor(sessionId: string, openCheckpointId?: string) {
    super(
      `Cannot restore session ${sessionId} while ${openCheckpointId === undefined ? 'a prompt' : `its prompt turn (checkpoint ${openCheckpointId})`} is running. Wait for the prompt to finish, or abort it, then restore.`,
      { code: 'checkpoint_restore_busy', category: 'state', recoverable: true, details: { sessionId, ...(openCheckpointId === undefined ? {} : { openCheckpointId }) } },
    );
  }
}
