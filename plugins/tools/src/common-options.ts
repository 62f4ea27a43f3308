import type { ISandboxClient } from './sandbox/sandbox-client.js';
import { ToolSessionState } from './session-state.js';
import { HostWorkspaceFiles, SandboxWorkspaceFiles, type WorkspaceFiles } from './workspace-files.js';
import { WorkspaceRoots, type WorkspaceOptions } from './workspace.js';

export interface SandboxOptions {
  client: ISandboxClient;
  /** Workspace root inside the sandbox; file paths must stay under it. Default `/workspace`. */
  root?: string;
}

/** A `ToolSessionState`, or a getter asked on every call (the tool plugins look the kernel's up). */
export type ToolSessionStateSource = ToolSessionState | (() => ToolSessionState);

/** A tool's own options, without the ones the composition gives every tool (workspace, state, sandbox). */
export type Own<T> = Omit<T, keyof WorkspaceOptions | 'state' | 'sandbox'>;

/** Options every file-touching tool factory accepts. */
export interface FileToolOptions extends WorkspaceOptions {
  /**
   * Per-session state (Bash directory, what was read). Give Read, Write and Edit the same one so
   * they agree on what was read. Default: a state of this tool's own, made on its first call.
   */
  state?: ToolSessionStateSource;
  /** Route file operations (and Bash commands) through a sandbox instead of the host. */
  sandbox?: SandboxOptions;
}

export const DEFAULT_SANDBOX_ROOT = '/workspace';

export function filesFor(options: FileToolOptions): WorkspaceFiles {
  return options.sandbox
    ? new SandboxWorkspaceFiles(options.sandbox.client, options.sandbox.root ?? DEFAULT_SANDBOX_ROOT)
    : new HostWorkspaceFiles(new WorkspaceRoots(options));
}

/** The tool's state as a getter: the given one, the given getter, or one of the tool's own. */
export function stateFor(options: FileToolOptions): () => ToolSessionState {
  const given = options.state;
  if (typeof given === 'function') return given;
  if (given) return () => given;
  let own: ToolSessionState | undefined;
  return () => (own ??= new ToolSessionState());
}
