import { createToken } from './token.js';
/** Claude Code hook events Tessera runs (settings `hooks` key and plugin `hooks/hooks.json`). */
export type HookEventName =
  | 'PreToolUse'
  | 'PostToolUse'
  | 'PostToolUseFailure'
  | 'UserPromptSubmit'
  | 'Stop'
  | 'StopFailure'
  | 'SubagentStart'
  | 'SubagentStop'
  | 'SessionStart'
  | 'SessionEnd'
  | 'PreCompact'
  | 'PostCompact'
  | 'Notification'
  | 'WorktreeCreate'
  | 'WorktreeRemove';

interface HookHandlerCommon {
  /** Seconds, as in Claude Code. */
  timeout?: number;
  statusMessage?: string;
  once?: boolean;
  /** A permission rule (`Bash(git *)`) that must match for tool events. */
  if?: string;
}

/** Runs a shell command with the hook input as JSON on stdin (Claude Code's `command` hook). `async` does not wait for it. */
export interface CommandHookHandler extends HookHandlerCommon {
  type: 'command';
  command: string;
  async?: boolean;
  shell?: string;
}

/** POSTs the hook input as JSON to `url`. `$VAR` in header values is filled in only for names in `allowedEnvVars`. */
export interface HttpHookHandler extends HookHandlerCommon {
  type: 'http';
  url: string;
  headers?: Record<string, string>;
  allowedEnvVars?: string[];
}

/** Asks a model (`prompt`) or a subagent (`agent`) to judge the event, with `prompt` as instructions. */
export interface PromptHookHandler extends HookHandlerCommon {
  type: 'prompt' | 'agent';
  prompt: string;
  model?: string;
}

/**
 * An in-process hook (never read from a file): a host's function, such as an Agent SDK hook
 * callback reached over the CLI's control protocol. It gets the hook input Claude Code would
 * pipe to a command and answers with the JSON a command would print (`{}` or nothing: no say).
 */
export interface CallbackHookHandler extends HookHandlerCommon {
  type: 'callback';
  /** Names it in messages and keeps two callbacks apart. */
  id: string;
  /** Handles one hook run; may return a promise. `signal` aborts when the hook times out or the run is aborted. */
  callback(input: Record<string, unknown>, signal: AbortSignal): unknown;
}

/** One configured hook handler, told apart by `type`. */
export type HookHandlerConfig = CommandHookHandler | HttpHookHandler | PromptHookHandler | CallbackHookHandler;

/** Handlers that run for an event when `matcher` matches (for tool events, the tool name). */
export interface HookMatcherGroup {
  /** Absent, `""` or `"*"` match everything. */
  matcher?: string;
  hooks: HookHandlerConfig[];
}

/** Normalised hook configuration: event → matcher groups. */
export type HooksConfig = Partial<Record<HookEventName, HookMatcherGroup[]>>;

/** Where a hook configuration came from (settings layer or plugin), for env vars and messages. */
export interface HooksSource {
  file: string;
  /** Set for a bundle plugin's hooks.json: becomes CLAUDE_PLUGIN_ROOT. */
  pluginRoot?: string;
}

/**
 * Hook configurations that are found rather than composed (bundle plugins' `hooks/hooks.json`).
 * The hooks plugin merges them with its settings files; a source that can change says so through
 * `onChange`, and the next hook run uses the new set.
 */
export interface HooksConfigSource {
  readonly name: string;
  /** The configurations this source has now, each with where it came from. */
  configs(): ReadonlyArray<{ config: HooksConfig; source: HooksSource }>;
  /** Calls `listener` whenever the answer of `configs()` may have changed; returns an unsubscribe. */
  onChange?(listener: () => void): () => void;
}

/** Contribution point: every hook configuration source bound here feeds the hooks plugin. */
export const HooksConfigSourceContribution = createToken<HooksConfigSource>('HooksConfigSource');
