import { BackgroundTasks, ReadAccess, SandboxPaths, ShellDirectories, ToolContribution, WorkspaceGrants, type Token, type Tool } from '@tessera/contracts';
import { ContainerSessionServices, definePlugin, PluginOptionsError, Stage, type Plugin, type PluginRegisterContext } from '@tessera/kernel';
import { bashOutputTool, killShellTool, type BackgroundShellToolOptions } from './background-shell-tools.js';
import type { BashToolOptions } from './bash-tool.js';
import { editTool, type EditToolOptions } from './edit-tool.js';
import { globTool, type GlobToolOptions } from './glob-tool.js';
import { grepTool, type GrepToolOptions } from './grep-tool.js';
import { readTool, type ReadToolOptions } from './read-tool.js';
import { SANDBOX_TOOL_NAMES, SANDBOX_UNAVAILABLE_TOOL_NAMES, sandboxToolFactoryPlugin } from './sandbox-tool-factory.js';
import { checkSandboxRoot } from './sandbox-root.js';
import { ToolSessionState, ToolSessionStateToken, type ToolSessionStateOptions } from './session-state.js';
import { DEFAULT_SANDBOX_ROOT, type Own, type SandboxOptions, type ToolSessionStateSource } from './common-options.js';
import { buildBashTool, buildFileTool, lookedUp, pick, resolveStateSource, shellDirectoriesOf, stateGetter, type ServiceLookup, type ToolServices } from './tool-builders.js';
import { webFetchTool, type WebFetchToolOptions } from './web-fetch-tool.js';
import { webSearchTool, type WebSearchToolOptions } from './web-search-tool.js';
import { todoWriteTool } from './todo-write-tool.js';
import { writeTool, type WriteToolOptions } from './write-tool.js';
import type { WorkspaceOptions } from './workspace.js';

export type BuiltinToolName = 'Bash' | 'BashOutput' | 'KillShell' | 'Read' | 'Write' | 'Edit' | 'Glob' | 'Grep' | 'WebFetch' | 'WebSearch' | 'TodoWrite';

/** Every built-in tool's name, in the order `builtinTools` composes them. */
export const BUILTIN_TOOL_NAMES: readonly BuiltinToolName[] = ['Bash', 'BashOutput', 'KillShell', 'Read', 'Write', 'Edit', 'Glob', 'Grep', 'WebFetch', 'WebSearch', 'TodoWrite'];

const TOOL_SESSION_STATE_PLUGIN_NAME = 'tool-session-state';

export interface ToolSessionStatePluginOptions extends ToolSessionStateOptions {
  /**
   * Bind this instance instead of building one per kernel. Every kernel the plugin value is
   * composed into then shares it (and its sessions' shell directories and read records).
   */
  state?: ToolSessionState;
}

const isPositiveInteger = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value > 0;
/** Structural, so a state from another copy of this package passes. */
const isToolSessionState = (value: unknown): value is ToolSessionState =>
  typeof (value as ToolSessionState | null)?.get === 'function' && typeof (value as ToolSessionState).release === 'function' && typeof (value as ToolSessionState).cwdFor === 'function';

/**
 * Provides `ToolSessionStateToken`: the tool state (Bash directories, what was read) of one
 * kernel, which its Bash, Read, Write and Edit plugins share so Read, Write and Edit agree.
 * Each kernel's container builds its own on first use, so one plugin value composes into any
 * number of kernels and two kernels never share a state. A session's entry is dropped when the
 * session ends. `builtinTools()` includes this plugin; add it yourself when you pick tool
 * plugins one by one.
 */
export function toolSessionStatePlugin(options: ToolSessionStatePluginOptions = {}): Plugin {
  for (const option of ['maxSessions', 'maxFilesPerSession'] as const) {
    if (options[option] !== undefined && !isPositiveInteger(options[option])) {
      throw new PluginOptionsError('toolSessionStatePlugin', TOOL_SESSION_STATE_PLUGIN_NAME, option, `must be a positive integer (got ${String(options[option])})`);
    }
  }
  if (options.state !== undefined && !isToolSessionState(options.state)) {
    throw new PluginOptionsError('toolSessionStatePlugin', TOOL_SESSION_STATE_PLUGIN_NAME, 'state', 'must be a ToolSessionState');
  }
  const { state: given, ...limits } = options;
  return definePlugin({
    name: TOOL_SESSION_STATE_PLUGIN_NAME,
    provides: [ToolSessionStateToken],
    register({ bind, hooks }) {
      // This kernel's state, once its container has built it (register runs once per kernel).
      let built: ToolSessionState | undefined;
      bind(ToolSessionStateToken)
        .toResolvedValue(() => (built = given ?? new ToolSessionState(limits)))
        .inSingletonScope();
      // The entry of a session that ended (a subagent's child session too) is dropped. A state
      // bound in this one's place (a rebind) is its binder's to release.
      hooks.sessionEnd.tap({ name: `${TOOL_SESSION_STATE_PLUGIN_NAME}:release`, stage: Stage.Observe }, ({ session }) => {
        built?.release(session.sessionId);
      });
    },
  });
}

interface ToolPluginSpec {
  name: string;
  make: (services: ToolServices) => Tool<never, unknown>;
  /** Other plugins' tokens the tool looks up when it needs them (declared `optional`). */
  uses?: readonly Token<unknown>[];
  /** The tool keeps per-session state (Bash directory, read records). */
  usesState?: boolean;
  /** The caller's `state` option: then no `ToolSessionStateToken` is needed. */
  state?: ToolSessionStateSource | undefined;
  provides?: readonly Token<unknown>[];
  bindServices?: (bind: PluginRegisterContext['bind'], state: (() => ToolSessionState) | undefined) => void;
}

/**
 * A tool plugin. The factory only keeps its options; the kernel's container builds the tool
 * each time a session is created (a transient binding, also resolved for each subagent job),
 * and that tool instance looks other plugins' services up the first time it needs them and
 * keeps them for the session. So one plugin value works in any number of kernels, and a rebind
 * of `BackgroundTasks`, `WorkspaceGrants`, `ReadAccess` or `ToolSessionStateToken` after
 * `createKernel` reaches sessions created afterwards, never a running one.
 */
function toolPlugin(spec: ToolPluginSpec): Plugin {
  const given = spec.state;
  const needsKernelState = spec.usesState === true && given === undefined;
  const uses = spec.uses ?? [];
  return definePlugin({
    name: spec.name,
    contributes: [ToolContribution],
    ...(spec.provides ? { provides: spec.provides } : {}),
    ...(needsKernelState ? { requires: [ToolSessionStateToken] } : {}),
    ...(uses.length > 0 ? { optional: uses } : {}),
    register({ bind, hooks }) {
      bind(ToolContribution).toDynamicValue((container) => {
        // This tool instance's (so this session's) view: each service resolved on first use, then kept.
        const services = new ContainerSessionServices(container);
        const lookup: ServiceLookup = (token) => services.getOptional(token);
        return spec.make({ lookup, state: stateGetter(given, lookup) }) as Tool;
      });
      spec.bindServices?.(bind, given === undefined ? undefined : () => resolveStateSource(given));
      // A state of the caller's own: this plugin drops an ended session's entry (the kernel's
      // state is released by toolSessionStatePlugin).
      if (spec.usesState && given !== undefined) {
        hooks.sessionEnd.tap({ name: `${spec.name}:release-session-state`, stage: Stage.Observe }, ({ session }) => {
          resolveStateSource(given).release(session.sessionId);
        });
      }
    },
  });
}

/**
 * Bash as a plugin. `run_in_background` uses the `BackgroundTasks` service when some plugin
 * binds it; otherwise such calls fail with an explanation. Provides `ShellDirectories` from the
 * tool state, since Bash is what moves a session's shell. Without a `state` option it requires
 * `ToolSessionStateToken` (`toolSessionStatePlugin()`, part of `builtinTools()`).
 */
export function bashToolPlugin(options: BashToolOptions = {}): Plugin {
  const sandboxed = options.sandbox !== undefined;
  return toolPlugin({
    name: 'tool-bash',
    make: (services) => buildBashTool(options, services),
    // In a sandbox, background commands are refused and the workspace is the sandbox's.
    uses: sandboxed ? [] : [...lookedUp(options.backgroundTasks, BackgroundTasks), ...lookedUp(options.grants, WorkspaceGrants)],
    usesState: true,
    state: options.state,
    provides: [ShellDirectories],
    bindServices(bind, given) {
      if (given) bind(ShellDirectories).toConstantValue(shellDirectoriesOf(given, sandboxed));
      // Transient: whoever asks (a session's services, once per session) gets a view of the
      // state bound at that moment.
      else bind(ShellDirectories).toResolvedValue((state: ToolSessionState) => shellDirectoriesOf(() => state, sandboxed), [ToolSessionStateToken]);
    },
  });
}

/** The `backgroundTasks` option when given, else the runtime bound as `BackgroundTasks`. */
function backgroundShellPlugin(name: string, make: (options: BackgroundShellToolOptions) => Tool<never, unknown>, options: BackgroundShellToolOptions): Plugin {
  return toolPlugin({
    name,
    make: ({ lookup }) => make({ ...options, backgroundTasks: pick(options.backgroundTasks, BackgroundTasks, lookup) }),
    uses: lookedUp(options.backgroundTasks, BackgroundTasks),
  });
}

/** BashOutput: reads what a `run_in_background` command logged (needs the background runtime). */
export function bashOutputToolPlugin(options: BackgroundShellToolOptions = {}): Plugin {
  return backgroundShellPlugin('tool-bash-output', (resolved) => bashOutputTool(resolved) as Tool<never, unknown>, options);
}

/** KillShell: stops a `run_in_background` command (needs the background runtime). */
export function killShellToolPlugin(options: BackgroundShellToolOptions = {}): Plugin {
  return backgroundShellPlugin('tool-kill-shell', (resolved) => killShellTool(resolved) as Tool<never, unknown>, options);
}

/** A file tool (Read, Write, Edit): the tool state, and `WorkspaceGrants` on the host. */
function fileToolPlugin<O extends ReadToolOptions | WriteToolOptions | EditToolOptions>(name: string, build: (options: O) => Tool<never, unknown>, options: O): Plugin {
  return toolPlugin({
    name,
    make: (services) => buildFileTool(build, options, services),
    uses: options.sandbox ? [] : lookedUp(options.grants, WorkspaceGrants),
    usesState: true,
    state: options.state,
  });
}

/** Read as a plugin. Without a `state` option it requires `ToolSessionStateToken`. */
export function readToolPlugin(options: ReadToolOptions = {}): Plugin {
  return fileToolPlugin('tool-read', (resolved) => readTool(resolved) as Tool<never, unknown>, options);
}

/** Write as a plugin. Without a `state` option it requires `ToolSessionStateToken`. */
export function writeToolPlugin(options: WriteToolOptions = {}): Plugin {
  return fileToolPlugin('tool-write', (resolved) => writeTool(resolved) as Tool<never, unknown>, options);
}

/** Edit as a plugin. Without a `state` option it requires `ToolSessionStateToken`. */
export function editToolPlugin(options: EditToolOptions = {}): Plugin {
  return fileToolPlugin('tool-edit', (resolved) => editTool(resolved) as Tool<never, unknown>, options);
}

/** Glob as a plugin; matches that `Read(…)` deny rules cover (the `ReadAccess` service) are left out. */
export function globToolPlugin(options: GlobToolOptions = {}): Plugin {
  return toolPlugin({
    name: 'tool-glob',
    make: ({ lookup }) =>
      globTool({ ...options, readAccess: pick(options.readAccess, ReadAccess, lookup), grants: pick(options.grants, WorkspaceGrants, lookup) }) as Tool<never, unknown>,
    uses: [...lookedUp(options.readAccess, ReadAccess), ...lookedUp(options.grants, WorkspaceGrants)],
  });
}

/** Grep as a plugin; files that `Read(…)` deny rules cover (the `ReadAccess` service) are not searched. */
export function grepToolPlugin(options: GrepToolOptions = {}): Plugin {
  return toolPlugin({
    name: 'tool-grep',
    make: ({ lookup }) =>
      grepTool({ ...options, readAccess: pick(options.readAccess, ReadAccess, lookup), grants: pick(options.grants, WorkspaceGrants, lookup) }) as Tool<never, unknown>,
    uses: [...lookedUp(options.readAccess, ReadAccess), ...lookedUp(options.grants, WorkspaceGrants)],
  });
}

/**
 * Binds `SandboxPaths` for a sandbox: the permission layer then judges paths under its root as
 * the host paths they stand for. `builtinTools({ sandbox })` adds it.
 */
export function sandboxPathsPlugin(sandbox: Pick<SandboxOptions, 'root'> = {}): Plugin {
  const root = sandbox.root ?? DEFAULT_SANDBOX_ROOT;
  checkSandboxRoot(root, (problem) => new PluginOptionsError('sandboxPathsPlugin', 'tool-sandbox-paths', 'root', problem));
  return definePlugin({
    name: 'tool-sandbox-paths',
    provides: [SandboxPaths],
    register({ bind }) {
      bind(SandboxPaths).toConstantValue({ root });
    },
  });
}

/** WebFetch options as `builtinTools` and `webFetchToolPlugin` take them. */
export interface WebFetchPluginOptions extends WebFetchToolOptions {
  /**
   * @deprecated Accepted and ignored. WebFetch no longer borrows the kernel's bound
   * `Provider` (that asked a provider other than the session's, and under the test preset
   * used up a scripted turn); it answers with `provider` when given, else with the session's
   * provider when a small `model` is configured, else returns the page as Markdown.
   */
  useProvider?: boolean;
}

/**
 * WebFetch as a plugin. The `provider` and `model` options pass through to the tool; the
 * kernel's bound `Provider` is not looked up (see `useProvider`): a prompt goes to the calling
 * session's provider (`ToolContext.provider`).
 */
export function webFetchToolPlugin(options: WebFetchPluginOptions = {}): Plugin {
  const { useProvider: _ignored, ...rest } = options;
  return toolPlugin({ name: 'tool-web-fetch', make: () => webFetchTool(rest) as Tool<never, unknown> });
}

export function webSearchToolPlugin(options: WebSearchToolOptions = {}): Plugin {
  return toolPlugin({ name: 'tool-web-search', make: () => webSearchTool(options) as Tool<never, unknown> });
}

/** TodoWrite as a plugin. */
export function todoWriteToolPlugin(): Plugin {
  return toolPlugin({ name: 'tool-todo-write', make: () => todoWriteTool() as Tool<never, unknown> });
}

export interface BuiltinToolsOptions extends WorkspaceOptions {
  /**
   * Tool state to use in every kernel these plugins join (they then share it). Default: each
   * kernel's container builds its own (`toolSessionStatePlugin()`).
   */
  state?: ToolSessionState;
  /** Route Bash, Read, Write and Edit through a sandbox client. */
  sandbox?: SandboxOptions;
  bash?: Own<BashToolOptions>;
  read?: Own<ReadToolOptions>;
  glob?: Own<GlobToolOptions>;
  grep?: Own<GrepToolOptions>;
  webFetch?: WebFetchPluginOptions;
  webSearch?: WebSearchToolOptions;
  /** BashOutput and KillShell (they share Bash's background runtime unless given one). */
  backgroundShells?: BackgroundShellToolOptions;
  /**
   * Tools to leave out, e.g. `['WebFetch', 'WebSearch']` for an offline agent. BashOutput
   * and KillShell are left out anyway with a sandbox (background commands are refused there).
   */
  exclude?: readonly BuiltinToolName[];
}

function validateBuiltinTools(options: BuiltinToolsOptions): void {
  const unknown = (options.exclude ?? []).filter((name) => !BUILTIN_TOOL_NAMES.includes(name));
  if (unknown.length > 0) {
    throw new PluginOptionsError('builtinTools', 'builtin-tools', 'exclude', `names no built-in tool: ${unknown.map((name) => JSON.stringify(name)).join(', ')} (the tools are ${BUILTIN_TOOL_NAMES.join(', ')})`);
  }
  if (options.sandbox !== undefined && typeof options.sandbox?.client !== 'object') {
    throw new PluginOptionsError('builtinTools', 'builtin-tools', 'sandbox.client', 'is missing: a sandbox needs a client (InMemorySandboxClient, E2BSandboxClient, your own ISandboxClient)');
  }
  if (options.state !== undefined && !isToolSessionState(options.state)) {
    throw new PluginOptionsError('builtinTools', 'builtin-tools', 'state', 'must be a ToolSessionState');
  }
}

/**
 * The built-in tools (Bash, BashOutput, KillShell, Read, Write, Edit, Glob, Grep, WebFetch,
 * WebSearch) as one plugin each, after `toolSessionStatePlugin()`, whose per-kernel state they
 * share so that Read, Write and Edit agree on what was read. With `sandbox`, Bash, Read, Write
 * and Edit run in it for every session (`sandboxPathsPlugin`); without, `sandboxToolFactoryPlugin`
 * builds them sandboxed for each session given its own client (`InteractiveSession`'s
 * `sandboxClient`). Only options are kept here: the
 * same list composes into any number of kernels, each with its own state. Spread into a preset:
 * `createKernel({ plugins: [...base, ...builtinTools({ additionalDirectories })] })`.
 */
export function builtinTools(options: BuiltinToolsOptions = {}): Plugin[] {
  validateBuiltinTools(options);
  const shared = {
    ...(options.additionalDirectories ? { additionalDirectories: options.additionalDirectories } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  };
  const workspace = options.additionalDirectories ? { additionalDirectories: options.additionalDirectories } : {};
  const skip = new Set<BuiltinToolName>(options.exclude ?? []);
  if (options.sandbox) for (const name of SANDBOX_UNAVAILABLE_TOOL_NAMES) skip.add(name);
  const background = { ...(options.bash?.backgroundTasks ? { backgroundTasks: options.bash.backgroundTasks } : {}), ...options.backgroundShells };
  const all: Array<[BuiltinToolName, () => Plugin]> = [
    ['Bash', () => bashToolPlugin({ ...options.bash, ...shared })],
    ['BashOutput', () => bashOutputToolPlugin(background)],
    ['KillShell', () => killShellToolPlugin(background)],
    ['Read', () => readToolPlugin({ ...options.read, ...shared })],
    ['Write', () => writeToolPlugin(shared)],
    ['Edit', () => editToolPlugin(shared)],
    ['Glob', () => globToolPlugin({ ...options.glob, ...workspace })],
    ['Grep', () => grepToolPlugin({ ...options.grep, ...workspace })],
    ['WebFetch', () => webFetchToolPlugin(options.webFetch)],
    ['WebSearch', () => webSearchToolPlugin(options.webSearch)],
    ['TodoWrite', () => todoWriteToolPlugin()],
  ];
  const plugins = all.filter(([name]) => !skip.has(name)).map(([, make]) => make());
  // Without a kernel-wide sandbox, a session given a sandbox client gets these tools sandboxed
  // (the composed ones only: an excluded tool stays out of sandboxed sessions too).
  const sandboxable = SANDBOX_TOOL_NAMES.filter((name) => !skip.has(name));
  return [
    toolSessionStatePlugin(options.state ? { state: options.state } : {}),
    ...plugins,
    options.sandbox
      ? sandboxPathsPlugin(options.sandbox)
      : sandboxToolFactoryPlugin({ ...(options.bash ? { bash: options.bash } : {}), ...(options.read ? { read: options.read } : {}), tools: sandboxable }),
  ];
}
