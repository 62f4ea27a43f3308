import { BackgroundTasks, ReadAccess, SandboxPaths, ShellDirectories, ToolContribution, WorkspaceGrants, type Tool } from '@tessera/contracts';
import { statSync } from 'node:fs';
import { definePlugin, Stage, type Plugin, type PluginRegisterContext, type TesseraHooks } from '@tessera/kernel';
import { bashOutputTool, killShellTool, type BackgroundShellToolOptions } from './background-shell-tools.js';
import { bashTool, type BashToolOptions } from './bash-tool.js';
import { editTool, type EditToolOptions } from './edit-tool.js';
import { globTool, type GlobToolOptions } from './glob-tool.js';
import { grepTool, type GrepToolOptions } from './grep-tool.js';
import { readTool, type ReadToolOptions } from './read-tool.js';
import { ToolSessionState } from './session-state.js';
import { DEFAULT_SANDBOX_ROOT, type SandboxOptions } from './common-options.js';
import { webFetchTool, type WebFetchToolOptions } from './web-fetch-tool.js';
import { webSearchTool, type WebSearchToolOptions } from './web-search-tool.js';
import { writeTool, type WriteToolOptions } from './write-tool.js';
import type { WorkspaceOptions } from './workspace.js';

export type BuiltinToolName = 'Bash' | 'BashOutput' | 'KillShell' | 'Read' | 'Write' | 'Edit' | 'Glob' | 'Grep' | 'WebFetch' | 'WebSearch';

/**
 * The tool state (Bash directories, what was read) of one kernel, shared by its tool plugins
 * so Read, Write and Edit agree. Keyed by the kernel's hooks object, which every plugin of
 * one kernel receives: two kernels never share a state, and nothing is built by a factory.
 */
const kernelStates = new WeakMap<TesseraHooks, ToolSessionState>();

function stateOf(hooks: TesseraHooks, given: ToolSessionState | undefined): ToolSessionState {
  if (given) return given;
  let state = kernelStates.get(hooks);
  if (!state) {
    state = new ToolSessionState();
    kernelStates.set(hooks, state);
  }
  return state;
}

/** Drops a session's Bash directory and read registry when the session ends (once per kernel and state). */
const releasing = new WeakMap<TesseraHooks, Set<ToolSessionState>>();
function releaseOnSessionEnd(hooks: TesseraHooks, name: string, state: ToolSessionState): void {
  const seen = releasing.get(hooks) ?? new Set<ToolSessionState>();
  releasing.set(hooks, seen);
  if (seen.has(state)) return;
  seen.add(state);
  hooks.sessionEnd.tap({ name: `${name}:release-session-state`, stage: Stage.Observe }, ({ session }) => {
    state.release(session.sessionId);
  });
}

/** The other plugins' services a tool may use, as found when a session is created. */
interface ToolServices {
  backgroundTasks: BackgroundTasks | undefined;
  grants: WorkspaceGrants | undefined;
  readAccess: ReadAccess | undefined;
}

const optionalDeps = [
  { serviceIdentifier: BackgroundTasks, optional: true },
  { serviceIdentifier: WorkspaceGrants, optional: true },
  { serviceIdentifier: ReadAccess, optional: true },
] as const;

/** An option that may be a value or a getter, else the service found. */
function pick<T>(given: T | (() => T | undefined) | undefined, found: T | undefined): () => T | undefined {
  return () => (typeof given === 'function' ? (given as () => T | undefined)() : given) ?? found;
}

/**
 * A tool plugin: the tool is built by the container each time a session is created (transient
 * binding), from that kernel's state and the services bound at that moment. So a plugin value
 * works in any number of kernels, and a rebind of `BackgroundTasks`, `WorkspaceGrants` or
 * `ReadAccess` reaches sessions created afterwards.
 */
function toolPlugin(
  name: string,
  make: (state: ToolSessionState, services: ToolServices) => Tool<never, unknown>,
  options: { state?: ToolSessionState; usesState?: boolean; provides?: Plugin['provides']; bindServices?: (bind: PluginRegisterContext['bind'], state: ToolSessionState) => void } = {},
): Plugin {
  return definePlugin({
    name,
    contributes: [ToolContribution],
    optional: [BackgroundTasks, WorkspaceGrants, ReadAccess],
    ...(options.provides ? { provides: options.provides } : {}),
    register({ bind, hooks }) {
      const state = stateOf(hooks, options.state);
      bind(ToolContribution).toResolvedValue(
        (backgroundTasks: BackgroundTasks | undefined, grants: WorkspaceGrants | undefined, readAccess: ReadAccess | undefined) =>
          make(state, { backgroundTasks, grants, readAccess }) as Tool,
        [...optionalDeps],
      );
      options.bindServices?.(bind, state);
      if (options.usesState) releaseOnSessionEnd(hooks, name, state);
    },
  });
}

/**
 * `ShellDirectories` over the session state Bash updates, exposing only the lookup: the
 * permission layer and the hook runner resolve a command's relative paths where it runs.
 */
function shellDirectoriesOf(state: ToolSessionState, sandboxed: boolean): ShellDirectories {
  return {
    cwdFor(sessionId) {
      const cwd = state.cwdFor(sessionId);
      // On the host, Bash starts over in the session cwd when the remembered directory is
      // gone: report where the next command will really run, or a check would judge its
      // paths in a directory it never runs in. (Sandbox paths are not host paths.)
      if (cwd === undefined || sandboxed) return cwd;
      return statSync(cwd, { throwIfNoEntry: false })?.isDirectory() ? cwd : undefined;
    },
  };
}

/**
 * Bash as a plugin. `run_in_background` uses the `BackgroundTasks` service when some plugin
 * binds it; otherwise such calls fail with an explanation. Provides `ShellDirectories` from its
 * session state, since Bash is what moves a session's shell.
 */
export function bashToolPlugin(options: BashToolOptions = {}): Plugin {
  return toolPlugin(
    'tool-bash',
    (state, found) =>
      bashTool({
        ...options,
        state,
        grants: pick(options.grants, found.grants),
        backgroundTasks: pick(options.backgroundTasks, found.backgroundTasks),
      }) as Tool<never, unknown>,
    {
      ...(options.state ? { state: options.state } : {}),
      usesState: true,
      provides: [ShellDirectories],
      bindServices(bind, state) {
        bind(ShellDirectories).toConstantValue(shellDirectoriesOf(state, options.sandbox !== undefined));
      },
    },
  );
}

/** The `backgroundTasks` option when given, else the runtime bound as `BackgroundTasks`. */
function backgroundShellPlugin(name: string, make: (options: BackgroundShellToolOptions) => Tool<never, unknown>, options: BackgroundShellToolOptions): Plugin {
  return toolPlugin(name, (_state, found) => make({ ...options, backgroundTasks: pick(options.backgroundTasks, found.backgroundTasks) }));
}

/** BashOutput: reads what a `run_in_background` command logged (needs the background runtime). */
export function bashOutputToolPlugin(options: BackgroundShellToolOptions = {}): Plugin {
  return backgroundShellPlugin('tool-bash-output', (resolved) => bashOutputTool(resolved) as Tool<never, unknown>, options);
}

/** KillShell: stops a `run_in_background` command (needs the background runtime). */
export function killShellToolPlugin(options: BackgroundShellToolOptions = {}): Plugin {
  return backgroundShellPlugin('tool-kill-shell', (resolved) => killShellTool(resolved) as Tool<never, unknown>, options);
}

export function readToolPlugin(options: ReadToolOptions = {}): Plugin {
  return toolPlugin('tool-read', (state, found) => readTool({ ...options, state, grants: pick(options.grants, found.grants) }) as Tool<never, unknown>, {
    ...(options.state ? { state: options.state } : {}),
    usesState: true,
  });
}

export function writeToolPlugin(options: WriteToolOptions = {}): Plugin {
  return toolPlugin('tool-write', (state, found) => writeTool({ ...options, state, grants: pick(options.grants, found.grants) }) as Tool<never, unknown>, {
    ...(options.state ? { state: options.state } : {}),
    usesState: true,
  });
}

export function editToolPlugin(options: EditToolOptions = {}): Plugin {
  return toolPlugin('tool-edit', (state, found) => editTool({ ...options, state, grants: pick(options.grants, found.grants) }) as Tool<never, unknown>, {
    ...(options.state ? { state: options.state } : {}),
    usesState: true,
  });
}

/** Glob as a plugin; matches that `Read(…)` deny rules cover (the `ReadAccess` service) are left out. */
export function globToolPlugin(options: GlobToolOptions = {}): Plugin {
  return toolPlugin(
    'tool-glob',
    (_state, found) => globTool({ ...options, readAccess: pick(options.readAccess, found.readAccess), grants: pick(options.grants, found.grants) }) as Tool<never, unknown>,
  );
}

/** Grep as a plugin; files that `Read(…)` deny rules cover (the `ReadAccess` service) are not searched. */
export function grepToolPlugin(options: GrepToolOptions = {}): Plugin {
  return toolPlugin(
    'tool-grep',
    (_state, found) => grepTool({ ...options, readAccess: pick(options.readAccess, found.readAccess), grants: pick(options.grants, found.grants) }) as Tool<never, unknown>,
  );
}

/**
 * Binds `SandboxPaths` for a sandbox: the permission layer then judges paths under its root as
 * the host paths they stand for. `builtinTools({ sandbox })` adds it.
 */
export function sandboxPathsPlugin(sandbox: Pick<SandboxOptions, 'root'>): Plugin {
  const root = sandbox.root ?? DEFAULT_SANDBOX_ROOT;
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
 * kernel's bound `Provider` is not looked up (see `useProvider`).
 */
export function webFetchToolPlugin(options: WebFetchPluginOptions = {}): Plugin {
  const { useProvider: _ignored, ...rest } = options;
  return toolPlugin('tool-web-fetch', () => webFetchTool(rest) as Tool<never, unknown>);
}

export function webSearchToolPlugin(options: WebSearchToolOptions = {}): Plugin {
  return toolPlugin('tool-web-search', () => webSearchTool(options) as Tool<never, unknown>);
}

type Own<T> = Omit<T, keyof WorkspaceOptions | 'state' | 'sandbox'>;

export interface BuiltinToolsOptions extends WorkspaceOptions {
  /** Shared per-session state; default: one `ToolSessionState` per kernel, shared by its tool plugins. */
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

/**
 * The built-in tools (Bash, BashOutput, KillShell, Read, Write, Edit, Glob, Grep, WebFetch,
 * WebSearch) as one plugin each, sharing one session state so that Read,
 * Write and Edit agree on what was read. Spread into a preset:
 * `createKernel({ plugins: [...base, ...builtinTools({ additionalDirectories })] })`.
 */
export function builtinTools(options: BuiltinToolsOptions = {}): Plugin[] {
  const shared = {
    ...(options.state ? { state: options.state } : {}),
    ...(options.additionalDirectories ? { additionalDirectories: options.additionalDirectories } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  };
  const workspace = options.additionalDirectories ? { additionalDirectories: options.additionalDirectories } : {};
  const skip = new Set<BuiltinToolName>(options.exclude ?? []);
  if (options.sandbox) {
    skip.add('BashOutput');
    skip.add('KillShell');
  }
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
  ];
  const plugins = all.filter(([name]) => !skip.has(name)).map(([, make]) => make());
  return options.sandbox ? [...plugins, sandboxPathsPlugin(options.sandbox)] : plugins;
}
