import { BackgroundTasks, Provider, ToolContribution, type Tool } from '@tessera/contracts';
import { definePlugin, Stage, type Plugin, type TesseraHooks } from '@tessera/kernel';
import { bashTool, type BashToolOptions } from './bash-tool.js';
import { editTool, type EditToolOptions } from './edit-tool.js';
import { globTool, type GlobToolOptions } from './glob-tool.js';
import { grepTool, type GrepToolOptions } from './grep-tool.js';
import { readTool, type ReadToolOptions } from './read-tool.js';
import { defaultToolSessionState, ToolSessionState } from './session-state.js';
import type { SandboxOptions } from './common-options.js';
import { webFetchTool, type WebFetchToolOptions } from './web-fetch-tool.js';
import { webSearchTool, type WebSearchToolOptions } from './web-search-tool.js';
import { writeTool, type WriteToolOptions } from './write-tool.js';
import type { WorkspaceOptions } from './workspace.js';

export type BuiltinToolName = 'Bash' | 'Read' | 'Write' | 'Edit' | 'Glob' | 'Grep' | 'WebFetch' | 'WebSearch';

/** Drops a session's Bash directory and read registry when the session ends. */
function releaseOnSessionEnd(hooks: TesseraHooks, name: string, state: ToolSessionState): void {
  hooks.sessionEnd.tap({ name: `${name}:release-session-state`, stage: Stage.Observe }, ({ session }) => {
    state.release(session.sessionId);
  });
}

function toolPlugin(name: string, tool: Tool<never, unknown>, state?: ToolSessionState, extra: Partial<Plugin> = {}): Plugin {
  return definePlugin({
    name,
    contributes: [ToolContribution],
    register({ bind, hooks }) {
      bind(ToolContribution).toConstantValue(tool as Tool);
      if (state) releaseOnSessionEnd(hooks, name, state);
    },
    ...extra,
  });
}

/**
 * Bash as a plugin. `run_in_background` uses the `BackgroundTasks` service when some plugin
 * binds it (looked up at boot); otherwise such calls fail with an explanation.
 */
export function bashToolPlugin(options: BashToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  let found: BackgroundTasks | undefined;
  const given = options.backgroundTasks;
  const tool = bashTool({
    ...options,
    state,
    backgroundTasks: () => (typeof given === 'function' ? given() : given) ?? found,
  });
  return toolPlugin('tool-bash', tool as Tool<never, unknown>, state, {
    boot({ getOptional }) {
      found = getOptional(BackgroundTasks);
    },
  });
}

export function readToolPlugin(options: ReadToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  return toolPlugin('tool-read', readTool({ ...options, state }) as Tool<never, unknown>, state);
}

export function writeToolPlugin(options: WriteToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  return toolPlugin('tool-write', writeTool({ ...options, state }) as Tool<never, unknown>, state);
}

export function editToolPlugin(options: EditToolOptions = {}): Plugin {
  const state = options.state ?? defaultToolSessionState;
  return toolPlugin('tool-edit', editTool({ ...options, state }) as Tool<never, unknown>, state);
}

export function globToolPlugin(options: GlobToolOptions = {}): Plugin {
  return toolPlugin('tool-glob', globTool(options) as Tool<never, unknown>);
}

export function grepToolPlugin(options: GrepToolOptions = {}): Plugin {
  return toolPlugin('tool-grep', grepTool(options) as Tool<never, unknown>);
}

/**
 * WebFetch as a plugin. Without a `provider` option it answers prompts with the kernel's
 * `Provider` when one is bound (looked up at boot), else returns the page as Markdown.
 */
export function webFetchToolPlugin(options: WebFetchToolOptions & { useProvider?: boolean } = {}): Plugin {
  let found: Provider | undefined;
  const { useProvider = true, ...rest } = options;
  const given = rest.provider;
  const tool = webFetchTool({ ...rest, provider: () => (typeof given === 'function' ? given() : given) ?? (useProvider ? found : undefined) });
  return toolPlugin('tool-web-fetch', tool as Tool<never, unknown>, undefined, {
    boot({ getOptional }) {
      found = getOptional(Provider);
    },
  });
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
  webFetch?: WebFetchToolOptions & { useProvider?: boolean };
  webSearch?: WebSearchToolOptions;
  /** Tools to leave out, e.g. `['WebFetch', 'WebSearch']` for an offline agent. */
  exclude?: readonly BuiltinToolName[];
}

/**
 * The eight built-in tools as one plugin each, sharing one session state so that Read,
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
  const skip = new Set(options.exclude ?? []);
  const all: Array<[BuiltinToolName, () => Plugin]> = [
    ['Bash', () => bashToolPlugin({ ...options.bash, ...shared })],
    ['Read', () => readToolPlugin({ ...options.read, ...shared })],
    ['Write', () => writeToolPlugin(shared)],
    ['Edit', () => editToolPlugin(shared)],
    ['Glob', () => globToolPlugin({ ...options.glob, ...workspace })],
    ['Grep', () => grepToolPlugin({ ...options.grep, ...workspace })],
    ['WebFetch', () => webFetchToolPlugin(options.webFetch)],
    ['WebSearch', () => webSearchToolPlugin(options.webSearch)],
  ];
  return all.filter(([name]) => !skip.has(name)).map(([, make]) => make());
}
