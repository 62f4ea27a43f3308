import type { ICommandHostAdapters, ImageBlock, PermissionMode, Provider, SandboxClientHandle, TextBlock } from '@tessera/contracts';
import type { Kernel, KernelSessionOptions } from '../kernel.js';
import type { Session } from '../session.js';

/**
 * What a sandbox offers the interactive session: snapshots on shutdown (kept in the session
 * record as `sandboxSnapshotId`), restore on resume (not when forked). The tools reach the
 * sandbox through the same object (`SandboxToolFactory`), which then must be a full
 * `ISandboxClient` of `@tessera/plugin-tools`.
 */
export type InteractiveSandboxClient = SandboxClientHandle;

/** How to create an `InteractiveSession`: from a kernel (with the session options below) or around a ready `Session`. */
export interface InteractiveSessionOptions {
  /** The composed application; sessions are created from it. Either this or `session`. */
  kernel?: Kernel;
  /** A pre-built session (tests); the kernel options below are then ignored. */
  session?: Session;
  cwd?: string;
  sessionId?: string;
  provider?: Provider;
  model?: string;
  permissionMode?: PermissionMode;
  /** The system prompt as given; otherwise the `SystemPromptBuilder` builds one when bound. */
  systemPrompt?: string;
  /** Appended to the built system prompt (`--append-system-prompt`). */
  appendSystemPrompt?: string;
  /**
   * Continue a stored session (`SessionStore`): same id, history, name. With `cwd` given, the
   * session must be that folder's (`ResumeSessionCwdMismatchError`, `resume_cwd_mismatch`).
   */
  resumeSessionId?: string;
  /** With `resumeSessionId` or `continueMostRecent`: start a new id from the stored history and leave the original untouched. */
  forkSession?: boolean;
  /** Continue the most recently updated stored session of `cwd`; a fresh session when there is none. */
  continueMostRecent?: boolean;
  /** A user-facing name for a new session. */
  name?: string;
  /**
   * Runs this session's Bash, Read, Write and Edit in a sandbox: when the kernel's tools are not
   * sandboxed kernel-wide, the kernel's `SandboxToolFactory` (bound by `builtinTools()`) builds
   * tools routed through this client for this session, its subagents included, and the host's
   * BashOutput and KillShell are not offered (as under a kernel-wide sandbox). Also hydrates
   * (`workspaceManifest`), snapshots on shutdown and restores on resume.
   */
  sandboxClient?: InteractiveSandboxClient;
  /** Workspace root inside the sandbox for the per-session tools; default the factory's (`/workspace`). */
  sandboxRoot?: string;
  /** Applied once before the first turn when no sandbox snapshot was restored. */
  workspaceManifest?: unknown;
  /** How to apply `workspaceManifest` (e.g. `applyWorkspaceManifest` from `@tessera/plugin-tools`). */
  applyWorkspaceManifest?: (client: InteractiveSandboxClient, manifest: unknown, hostRoot: string) => Promise<unknown>;
  /** Adapters commands may ask for (`ICommandHostContext.getCommandHostAdapters()`). */
  commandHostAdapters?: ICommandHostAdapters;
  /** More options for the session the kernel creates (tools, limits…). */
  sessionOptions?: KernelSessionOptions;
}

/** A stored session as a picker lists it. */
export interface IResumableSession {
  id: string;
  name?: string;
  cwd: string;
  firstPrompt: string;
  updatedAt: string;
  messageCount: number;
}

/** More of a prompt than its text (`InteractiveSession.submit`'s fourth argument). */
export interface ISubmitOptions {
  /**
   * The prompt as content blocks, text and images in order (a pasted screenshot, a stream-json
   * message with images): the turn's user message carries them (`RunOptions.content`). `input`
   * should be their text; hooks and the timeline's display see that.
   */
  content?: ReadonlyArray<TextBlock | ImageBlock>;
}
