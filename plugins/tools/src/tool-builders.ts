import { BackgroundTasks, WorkspaceGrants, type ShellDirectories, type Token, type Tool } from '@tessera/contracts';
import { statSync } from 'node:fs';
import { bashTool, type BashToolOptions } from './bash-tool.js';
import type { ToolSessionStateSource } from './common-options.js';
import { editTool, type EditToolOptions } from './edit-tool.js';
import { readTool, type ReadToolOptions } from './read-tool.js';
import { ToolSessionStateToken, type ToolSessionState } from './session-state.js';
import { writeTool, type WriteToolOptions } from './write-tool.js';

/**
 * How Bash, Read, Write and Edit are built from their options and the kernel's services: one
 * code path for the tool plugins (`bashToolPlugin()` …) and for the per-session sandbox tool
 * factory (`sandboxToolFactoryPlugin()`), so a sandboxed tool is the same tool either way.
 */

/** Looks a token up; `undefined` when nothing is bound. */
export type ServiceLookup = <T>(token: Token<T>) => T | undefined;

/** What a tool builder gets: lookups made when the tool first needs them. */
export interface ToolServices {
  /** The kernel's services, each looked up on first use and kept for the tool instance's life. */
  lookup: ServiceLookup;
  /** The tool state: the caller's `state` option, else the kernel's `ToolSessionStateToken`. */
  state: () => ToolSessionState;
}

export const resolveStateSource = (source: ToolSessionStateSource): ToolSessionState => (typeof source === 'function' ? source() : source);

/** The kernel's tool state; throws, saying what to compose, when none is bound. */
export function kernelState(lookup: ServiceLookup): ToolSessionState {
  const state = lookup(ToolSessionStateToken);
  if (!state) {
    throw new Error('no ToolSessionState is bound: compose toolSessionStatePlugin() (builtinTools() includes it) or give the tool plugin a `state`.');
  }
  return state;
}

/** The caller's `state` option as a getter, else the kernel's state (looked up when first used). */
export function stateGetter(given: ToolSessionStateSource | undefined, lookup: ServiceLookup): () => ToolSessionState {
  return given === undefined ? () => kernelState(lookup) : () => resolveStateSource(given);
}

/** An option that may be a value or a getter, else the kernel's service (looked up when first used). */
export function pick<T>(given: T | (() => T | undefined) | undefined, token: Token<T>, lookup: ServiceLookup): () => T | undefined {
  if (given === undefined) return () => lookup(token);
  if (typeof given === 'function') return () => (given as () => T | undefined)() ?? lookup(token);
  return () => given;
}

/** `[token]` when the tool may look it up: no option given, or a getter that may come back empty. */
export function lookedUp<T>(given: T | (() => T | undefined) | undefined, token: Token<T>): Token<unknown>[] {
  return given === undefined || typeof given === 'function' ? [token] : [];
}

/**
 * `ShellDirectories` over the session state Bash updates, exposing only the lookup: the
 * permission layer and the hook runner resolve a command's relative paths where it runs.
 */
export function shellDirectoriesOf(state: () => ToolSessionState, sandboxed: boolean): ShellDirectories {
  return {
    cwdFor(sessionId) {
      const cwd = state().cwdFor(sessionId);
      // On the host, Bash starts over in the session cwd when the remembered directory is
      // gone: report where the next command will really run, or a check would judge its
      // paths in a directory it never runs in. (Sandbox paths are not host paths.)
      if (cwd === undefined || sandboxed) return cwd;
      return statSync(cwd, { throwIfNoEntry: false })?.isDirectory() ? cwd : undefined;
    },
  };
}

/** Bash with its `grants` and `backgroundTasks` from the kernel unless given. */
export function buildBashTool(options: BashToolOptions, { lookup, state }: ToolServices): Tool<never, unknown> {
  return bashTool({
    ...options,
    state,
    grants: pick(options.grants, WorkspaceGrants, lookup),
    backgroundTasks: pick(options.backgroundTasks, BackgroundTasks, lookup),
  }) as Tool<never, unknown>;
}

/** A file tool (Read, Write, Edit) with the tool state, and `WorkspaceGrants` on the host. */
export function buildFileTool<O extends ReadToolOptions | WriteToolOptions | EditToolOptions>(
  build: (options: O) => Tool<never, unknown>,
  options: O,
  { lookup, state }: ToolServices,
): Tool<never, unknown> {
  return build({ ...options, state, grants: pick(options.grants, WorkspaceGrants, lookup) });
}

export const buildReadTool = (options: ReadToolOptions, services: ToolServices): Tool<never, unknown> => buildFileTool((resolved) => readTool(resolved) as Tool<never, unknown>, options, services);
export const buildWriteTool = (options: WriteToolOptions, services: ToolServices): Tool<never, unknown> => buildFileTool((resolved) => writeTool(resolved) as Tool<never, unknown>, options, services);
export const buildEditTool = (options: EditToolOptions, services: ToolServices): Tool<never, unknown> => buildFileTool((resolved) => editTool(resolved) as Tool<never, unknown>, options, services);
