import type { Provider } from './provider.js';
import type { ImageBlock, TextBlock } from './message.js';
import type { ToolProgress } from './session-event.js';
import type { SessionServices } from './session-services.js';
import { createToken } from './token.js';

/** A JSON Schema object describing a tool's input, as sent to providers. */
export type JsonSchema = Record<string, unknown>;

/** What a tool's `execute` gets besides its input: the abort signal, where it runs and session services. */
export interface ToolContext {
  /** Aborted when the run is aborted; long-running tools must stop promptly. */
  signal: AbortSignal;
  /** Working directory of the session. */
  cwd: string;
  /** Id of the `tool_use` block being executed. */
  toolCallId: string;
  sessionId: string;
  /**
   * The session's provider, for tools that make a model call of their own (WebFetch answers
   * its prompt over the page). Absent when the caller has none to offer.
   */
  provider?: Provider;
  /**
   * The session's services (the same view hook taps get as `session.services`), so a tool
   * reaches another plugin's service through its token. Absent outside a session.
   */
  services?: SessionServices;
  /** Reports progress while the tool runs (a `tool_progress` session event). Absent outside a session. */
  reportProgress?: (progress: ToolProgress) => void;
}

/**
 * What a tool returns. A failure is a result with `success: false`, not a throw; a thrown error
 * is turned into a `tool_error` result by the runtime.
 */
export interface ToolResult<TData = unknown> {
  success: boolean;
  /** What the model sees. Text, or text and image blocks. */
  output: string | Array<TextBlock | ImageBlock>;
  /** Structured data for UIs and hooks (diffs, start lines…). Never sent to the model. */
  data?: TData;
  /** Error text when `success` is false. */
  error?: string;
  /**
   * Stable code for failures the runtime produces: `unknown_tool`, `invalid_input`, `denied`,
   * `blocked`, `hook_error`, `tool_error`, `aborted`, `internal_error`. Tools may add their own.
   */
  errorCode?: string;
  metadata?: Record<string, unknown>;
}

/** The outcome of `Tool.validate`: the normalised input, or a message the model gets back as an `invalid_input` error. */
export type ToolInputCheck<TInput> =
  | { success: true; data: TInput }
  | { success: false; message: string };

/**
 * A tool the model can call. `parameters` is the JSON Schema sent to providers;
 * `validate` (when present) checks and normalises raw model input before `execute`.
 * Tools built with `defineTool` derive both from a zod schema.
 */
export interface Tool<TInput = unknown, TData = unknown> {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  /**
   * Result text this tool keeps within on its own (Read stops at a line boundary and says how
   * to read on). Output layers that cap tool results (the permission enforcer's truncation)
   * use this instead of their default, so they never cut the middle out of such a result.
   */
  readonly maxResultChars?: number;
  /**
   * How permission rules judge this tool when its name is not one they know (MCP and
   * third-party tools): as a reader, an editor, a command runner or a fetcher of the path,
   * command or URL in `input[subject]`. Built-in tools need none.
   */
  readonly permission?: ToolPermission;
  /** Checks and normalises the model's raw input. Without it, `execute` receives the input unchecked. */
  validate?(input: unknown): ToolInputCheck<TInput>;
  /** Runs the tool and returns its result. It must honour `context.signal`. */
  execute(input: TInput, context: ToolContext): Promise<ToolResult<TData>> | ToolResult<TData>;
}

/** The permission family of a tool (see `Tool.permission`). */
export interface ToolPermission {
  /** `read`: like Read/Glob/Grep; `edit`: like Edit/Write; `execute`: like Bash; `fetch`: like WebFetch. */
  family: 'read' | 'edit' | 'execute' | 'fetch';
  /** The input field holding what is judged: a path (`read`/`edit`), a command (`execute`), a URL (`fetch`). */
  subject?: string;
}

/** The JSON shape of a tool offered to a provider. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Contribution point: every tool bound here is offered to sessions created by the kernel. */
export const ToolContribution = createToken<Tool>('ToolContribution');
export type ToolContribution = Tool;

/**
 * Tools that are not known when the kernel is composed: an MCP server's tools after it
 * connects, a plugin's tools after a reload. A session asks every source for its tools before
 * its first model call and again before the next call whenever a source signals a change,
 * so tools may come and go between rounds (never inside one).
 */
export interface ToolSource {
  /** For diagnostics and `describe()`. */
  readonly name: string;
  /** The tools for this session now. A source that fails keeps the tools it gave last time. */
  tools(session: { readonly sessionId: string; readonly cwd: string }): readonly Tool[] | Promise<readonly Tool[]>;
  /** Calls `listener` whenever the answer of `tools()` may have changed; returns an unsubscribe. */
  onChange?(listener: () => void): () => void;
}

/** Contribution point: every source bound here feeds sessions created by the kernel. */
export const ToolSourceContribution = createToken<ToolSource>('ToolSource');
