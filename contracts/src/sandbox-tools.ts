import type { ServiceOverride } from './session-services.js';
import type { Tool } from './tool.js';
import { createToken } from './token.js';

/**
 * A sandbox client as contracts and the kernel see it: structural, and only what the
 * interactive session uses itself (snapshot on shutdown, restore on resume). The port the
 * tools talk to (`ISandboxClient`: run, readFile, writeFile, stat, mkdir) belongs to
 * `@tessera/plugin-tools`; a `SandboxToolFactory` checks the client against it.
 */
export interface SandboxClientHandle {
  /** Snapshots the sandbox and returns the snapshot id. */
  snapshot?(): Promise<string>;
  /** Restores a snapshot taken by `snapshot`. */
  restore?(snapshotId: string): Promise<void>;
}

/** What a session asks a `SandboxToolFactory` for: tools that work in this sandbox. */
export interface SandboxToolRequest {
  /** The session's sandbox client (an `ISandboxClient` of `@tessera/plugin-tools`). */
  client: SandboxClientHandle;
  /** Workspace root inside the sandbox; default the factory's (`/workspace`). */
  root?: string;
}

/** The tools and per-session service values one sandboxed session needs. */
export interface SandboxToolSet {
  /**
   * Bash, Read, Write and Edit routed through the client: they take the place of the
   * contributed tools of the same names (`KernelSessionOptions.replaceTools`).
   */
  tools: readonly Tool[];
  /**
   * What the session's services must say instead of the kernel's bindings
   * (`KernelSessionOptions.serviceOverrides`): `SandboxPaths` (so the permission layer, hook
   * runner and checkpoint plugins treat the session as sandboxed) and `ShellDirectories` (the
   * shell's directory inside the sandbox).
   */
  services: readonly ServiceOverride[];
  /**
   * Names of contributed tools the session must not offer (`KernelSessionOptions.removeTools`):
   * host tools with nothing to do in the sandbox — BashOutput and KillShell, since its Bash
   * refuses background commands — so the session offers what a kernel-wide sandbox offers.
   */
  removeTools?: readonly string[];
}

/**
 * Builds sandboxed tools for one session, so a kernel composed without a sandbox can still run
 * a session in one (`new InteractiveSession({ kernel, sandboxClient })`). `create` throws a
 * `TesseraError` (`invalid_sandbox_client`) when the client cannot run commands or reach files.
 */
export interface SandboxToolFactory {
  /** Fresh tools and service values for one session (each call makes new tool instances). */
  create(request: SandboxToolRequest): SandboxToolSet;
}

/**
 * The per-session sandbox tool factory, bound by `builtinTools()` when it is composed without a
 * sandbox. Optional: without it a session's `sandboxClient` only hydrates, snapshots and
 * restores the sandbox, and the tools run on the host.
 */
export const SandboxToolFactory = createToken<SandboxToolFactory>('SandboxToolFactory');
