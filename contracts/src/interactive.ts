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
}

export type IToolSummary = IToolState;

/** Usage of one turn (spec: IUsageSnapshot). */
export interface IUsageSnapshot {
  kind: 'exact' | 'estimated';
  scope: 'turn';
  totalTokens: number;
  promptTokens?: number;
  completionTokens?: number;
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
  build(request: SystemPromptRequest): Promise<SystemPromptResult>;
}

export const SystemPromptBuilder = createToken<SystemPromptBuilder>('SystemPromptBuilder');

// ---------------------------------------------------------------- edit checkpoints

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

export interface IEditCheckpointInspection {
  checkpoint: IEditCheckpointSummary;
  files: IEditCheckpointFile[];
  /** Restoring to this checkpoint rolls these back, newest first (this one last). */
  rollback: string[];
  /** Checkpoints that stay (older than this one). */
  kept: string[];
}

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
  beginTurn(session: { sessionId: string; cwd: string }, prompt: string): Promise<IEditCheckpointSummary>;
  finalizeTurn(sessionId: string): Promise<void>;
  list(sessionId: string): Promise<IEditCheckpointSummary[]>;
  inspect(sessionId: string, checkpointId: string): Promise<IEditCheckpointInspection>;
  restore(sessionId: string, checkpointId: string): Promise<IEditCheckpointRestoreResult>;
}

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
