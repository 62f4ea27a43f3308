import type { ISandboxClient } from './sandbox/sandbox-client.js';
import { defaultToolSessionState, type ToolSessionState } from './session-state.js';
import { HostWorkspaceFiles, SandboxWorkspaceFiles, type WorkspaceFiles } from './workspace-files.js';
import { WorkspaceRoots, type WorkspaceOptions } from './workspace.js';

export interface SandboxOptions {
  client: ISandboxClient;
  /** Workspace root inside the sandbox; file paths must stay under it. Default `/workspace`. */
  root?: string;
}

/** Options every file-touching tool factory accepts. */
export interface FileToolOptions extends WorkspaceOptions {
  /** Per-session state shared with the other tools; default `defaultToolSessionState`. */
  state?: ToolSessionState;
  /** Route file operations (and Bash commands) through a sandbox instead of the host. */
  sandbox?: SandboxOptions;
}

export const DEFAULT_SANDBOX_ROOT = '/workspace';

export function filesFor(options: FileToolOptions): WorkspaceFiles {
  return options.sandbox
    ? new SandboxWorkspaceFiles(options.sandbox.client, options.sandbox.root ?? DEFAULT_SANDBOX_ROOT)
    : new HostWorkspaceFiles(new WorkspaceRoots(options));
}

export function stateFor(options: FileToolOptions): ToolSessionState {
  return options.state ?? defaultToolSessionState;
}
