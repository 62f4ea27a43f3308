import type {
  Clock,
  Compaction,
  ContextWindow,
  IContextWindowState,
  IHistoryEntry,
  ImageBlock,
  PermissionMode,
  Provider,
  SessionEndReason,
  SessionStartSource,
  SessionLogger,
  SessionServices,
  SessionStore,
  TextBlock,
  Tool,
  ToolExecutionEvent,
  ToolSource,
} from '@tessera/contracts';
import type { TesseraHooks } from './hooks.js';

/** A fraction of the context window in (0, 1] at which auto-compaction runs, or `false` for never. */
export type TAutoCompactThreshold = number | false;

/** A finished compaction with the context-window state before and after (`onCompactEvent`). */
export interface CompactEvent {
  trigger: 'manual' | 'auto';
  before: IContextWindowState | undefined;
  after: IContextWindowState | undefined;
}

/** Per-run callbacks (and a caller's own abort signal) for one `run()`. */
export interface RunOptions {
  /** Each streamed text chunk of this run. */
  onTextDelta?: (delta: string) => void;
  /** Start and end of each tool call of this run. */
  onToolExecution?: (event: ToolExecutionEvent) => void;
  /** Aborting it has the same effect as `session.abort()`. */
  signal?: AbortSignal;
  /**
   * What the user typed when `message` was built from it (`/audit src` expanded to a skill's
   * prompt): `userPromptSubmit` taps get it as `rawPrompt`, so hooks match what was typed.
   */
  rawPrompt?: string;
  /**
   * The prompt as content blocks, text and images in their order (a pasted screenshot, a
   * stream-json message with an image). The turn's user message carries these blocks; `message`
   * stays what `userPromptSubmit` taps and the session log see, so it should be the blocks' text.
   * When a tap rewrites the prompt, the message holds the images, then the rewritten text.
   */
  content?: ReadonlyArray<TextBlock | ImageBlock>;
}

/**
 * Everything a `Session` is built from. Only `provider` is required; `kernel.createSession`
 * fills in the rest from the container (see `KernelSessionOptions`).
 */
export interface SessionOptions {
  provider: Provider;
  tools?: readonly Tool[];
  /** Tools found later (MCP servers, reloads): asked before the first model call and after each change signal. */
  toolSources?: readonly ToolSource[];
  /** The system prompt, sent with every model call. */
  systemMessage?: string;
  /** Start from this stored history (resume): chat entries become the conversation. No hook fires for them. */
  history?: readonly IHistoryEntry[];
  /** The stored session's creation time (resume); now otherwise. */
  createdAt?: string;
  /**
   * Fields kept in the session record beside the standard ones (a user-facing `name`, a
   * sandbox snapshot id…): restored from a record on resume, saved with every save.
   */
  recordFields?: Readonly<Record<string, unknown>>;
  /** Builds a context-window tracker for a model; `setModel` uses it to rebuild the tracker. */
  createContextWindow?: (model: string | undefined) => ContextWindow | undefined;
  /** Reuse an id (resume); a fresh UUID otherwise. */
  sessionId?: string;
  /** What `sessionStart` reports as its source (default `startup`; `resume` when restoring). */
  startSource?: SessionStartSource;
  cwd?: string;
  model?: string;
  /** Model/tool rounds per `run()`; omitted = unlimited. */
  maxTurns?: number;
  /** Idle timeout per provider call in ms, refreshed by every streamed delta. */
  providerTimeout?: number;
  permissionMode?: PermissionMode;
  /**
   * Provider-hosted tools this session asks for on every request (default `{ webSearch: true }`:
   * a provider that offers hosted web search and was not configured with `webSearch: false`
   * uses it). Per call, so nothing a session does changes a provider other sessions share.
   */
  nativeTools?: { webSearch?: boolean };
  /** The services this session resolves (`kernel.createSession` passes the kernel's). */
  services?: SessionServices;
  /** Shared kernel hooks; a Session made without a kernel gets a fresh set. */
  hooks?: TesseraHooks;
  clock?: Clock;
  sessionStore?: SessionStore;
  sessionLogger?: SessionLogger;
  contextWindow?: ContextWindow;
  compaction?: Compaction;
  /** Fraction of the context window that triggers compaction at the start of `run()` (default 0.835). */
  autoCompactThreshold?: TAutoCompactThreshold;
  compactInstructions?: string;
  /** How often one turn may be continued by `stop` taps before it ends anyway (default 8). */
  maxStopContinuations?: number;
  /** Each streamed text chunk of every run. Called on the hot path: keep it cheap. */
  onTextDelta?: (delta: string) => void;
  /** Start and end of each tool call. */
  onToolExecution?: (event: ToolExecutionEvent) => void;
  /** The context-window estimate changed. */
  onContextUpdate?: (state: IContextWindowState) => void;
  /** A compaction finished; receives the summary that replaced the conversation. */
  onCompact?: (summary: string) => void;
  /** A compaction finished; receives its trigger and the usage before and after. */
  onCompactEvent?: (event: CompactEvent) => void;
}

/** Options of `session.shutdown()`; `reason` is what `sessionEnd` reports (default `other`). */
export interface ISessionShutdownOptions {
  reason?: SessionEndReason;
}
