import { BackgroundTasks, ReadAccess, SandboxPaths, ShellDirectories, ToolContribution, WorkspaceGrants, type Token, type Tool } from '@tessera/contracts';
import { statSync } from 'node:fs';
import { definePlugin, Stage, type Plugin, type PluginRegisterContext, type PluginRuntimeContext, type TesseraHooks } from '@tessera/kernel';
import { bashOutputTool, killShellTool, type BackgroundShellToolOptions } from './background-shell-tools.js';
import { bashTool, type BashToolOptions } from './bash-tool.js';
import { editTool, type EditToolOptions } from './edit-tool.js';
import { globTool, type GlobToolOptions } from './glob-tool.js';
import { grepTool, type GrepToolOptions } from './grep-tool.js';
import { readTool, type ReadToolOptions } from './read-tool.js';
import { defaultToolSessionState, ToolSessionState } from './session-state.js';
import { DEFAULT_SANDBOX_ROOT, type SandboxOptions } from './common-options.js';
import { webFetchTool, type WebFetchToolOptions } from './web-fetch-tool.js';
import { webSearchTool, type WebSearchToolOptions } from './web-search-tool.js';
import { writeTool, type WriteToolOptions } from './write-tool.js';
import type { WorkspaceOptions } from './workspace.js';

export type BuiltinToolName = 'Bash' | 'BashOutput' | 'KillShell' | 'Read' | 'Write' | 'Edit' | 'Glob' | 'Grep' | 'WebFetch' | 'WebSearch';

/** Drops a session's Bash directory and read registry when the session ends. */
function releaseOnSessionEnd(hooks: TesseraHooks, name: string, state: ToolSessionState): void {
  hooks.sessionEnd.tap({ name: `${name}:release-session-state`, stage: Stage.Observe }, ({ session }) => {
    state.release(session.sessionId);
  });
}

interface ToolPluginExtras extends Partial<Pick<Plugin, 'provides' | 'boot'>> {
  /** Binds the services named in `provides`, next to the tool. */
  bindServices?(bind: PluginRegisterContext['bind']): void;
}

function toolPlugin(name: string, tool: Tool<never, unknown>, state?: ToolSessionState, extras: ToolPluginExtras = {}): Plugin {
  const { bindServices, ...rest } = extras;
  return definePlugin({
    name,
    contributes: [ToolContribution],
    register({ bind, hooks }) {
      bind(ToolContribution).toConstantValue(tool as Tool);
      bindServices?.(bind);
      if (state) releaseOnSessionEnd(hooks, name, state);
    },
    ...rest,
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
 * binds it (looked up at boot); otherwise such calls fail with an explanation. Provides
 * `ShellDirectories` from its session state, since Bash is what moves a session's shell.
 */
export function bashToolPlugin(options: BashToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  let found: BackgroundTasks | undefined;
  const given = options.backgroundTasks;
  const grants = optionalService(WorkspaceGrants, options.grants);
  const tool = bashTool({
    ...options,
    state,
    grants: grants.lookup,
    backgroundTasks: () => (typeof given === 'function' ? given() : given) ?? found,
  });
  return toolPlugin('tool-bash', tool as Tool<never, unknown>, state, {
    provides: [ShellDirectories],
    bindServices(bind) {
      bind(ShellDirectories).toConstantValue(shellDirectoriesOf(state, options.sandbox !== undefined));
    },
    boot: boots(grants.boot, ({ getOptional }) => {
      found = getOptional(BackgroundTasks);
    }),
  });
}

/** The `backgroundTasks` option when given, else the runtime bound as `BackgroundTasks` (found at boot). */
function backgroundShellPlugin(name: string, make: (options: BackgroundShellToolOptions) => Tool<never, unknown>, options: BackgroundShellToolOptions): Plugin {
  let found: BackgroundTasks | undefined;
  const given = options.backgroundTasks;
  const tool = make({ ...options, backgroundTasks: () => (typeof given === 'function' ? given() : given) ?? found });
  return toolPlugin(name, tool, undefined, {
    boot({ getOptional }) {
      found = getOptional(BackgroundTasks);
    },
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

export function readToolPlugin(options: ReadToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  const grants = optionalService(WorkspaceGrants, options.grants);
  return toolPlugin('tool-read', readTool({ ...options, state, grants: grants.lookup }) as Tool<never, unknown>, state, { boot: grants.boot });
}

export function writeToolPlugin(options: WriteToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  const grants = optionalService(WorkspaceGrants, options.grants);
  return toolPlugin('tool-write', writeTool({ ...options, state, grants: grants.lookup }) as Tool<never, unknown>, state, { boot: grants.boot });
}

export function editToolPlugin(options: EditToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  const grants = optionalService(WorkspaceGrants, options.grants);
  return toolPlugin('tool-edit', editTool({ ...options, state, grants: grants.lookup }) as Tool<never, unknown>, state, { boot: grants.boot });
}

/**
 * An optional service: the option when given, else what some plugin binds under `token`,
 * found once at boot (every binding is in place by then; it may be absent).
 */
function optionalService<T>(token: Token<T>, given: T | (() => T | undefined) | undefined): {
  lookup: () => T | undefined;
  boot: (context: PluginRuntimeContext) => void;
} {
  let found: T | undefined;
  return {
    lookup: () => (typeof given === 'function' ? (given as () => T | undefined)() : given) ?? found,
    boot(context) {
      found = context.getOptional(token);
    },
  };
}

/** Runs each boot step in turn. */
function boots(...steps: Array<(context: PluginRuntimeContext) => void>): NonNullable<Plugin['boot']> {
  return (context) => {
    for (const step of steps) step(context);
  };
}

/** Glob as a plugin; matches that `Read(…)` deny rules cover (the `ReadAccess` service) are left out. */
export function globToolPlugin(options: GlobToolOptions = {}): Plugin {
  const access = optionalService(ReadAccess, options.readAccess);
  const grants = optionalService(WorkspaceGrants, options.grants);
  const tool = globTool({ ...options, readAccess: access.lookup, grants: grants.lookup });
  return toolPlugin('tool-glob', tool as Tool<never, unknown>, undefined, { boot: boots(access.boot, grants.boot) });
}

/** Grep as a plugin; files that `Read(…)` deny rules cover (the `ReadAccess` service) are not searched. */
export function grepToolPlugin(options: GrepToolOptions = {}): Plugin {
  const access = optionalService(ReadAccess, options.readAccess);
  const grants = optionalService(WorkspaceGrants, options.grants);
  const tool = grepTool({ ...options, readAccess: access.lookup, grants: grants.lookup });
  return toolPlugin('tool-grep', tool as Tool<never, unknown>, undefined, { boot: boots(access.boot, grants.boot) });
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
  return toolPlugin('tool-web-fetch', webFetchTool(rest) as Tool<never, unknown>);
}

export function webSearchToolPlugin(options: WebSearchToolOptions = {}): Plugin {
  return toolPlugin('tool-web-search', webSearchTool(options) as Tool<never, unknown>);
}

type Own<T> = Omit<T, keyof WorkspaceOptions | 'state' | 'sandbox'>;

export interface BuiltinToolsOptions extends WorkspaceOptions {
  /** Shared per-session state; default: a fresh `ToolSessionState` for this set of plugins. */
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
  const state = options.state ?? new ToolSessionState();
  const shared = {
    state,
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
