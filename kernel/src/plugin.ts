import type { Token } from '@tessera/contracts';
import type { BindToFluentSyntax, Container } from 'inversify';
import type { TesseraHooks } from './hooks.js';

/** What a plugin's `register` gets: binding for the tokens it declared, decoration, and the hooks to tap. */
export interface PluginRegisterContext {
  /**
   * Binds a token this plugin declared in `provides` or `contributes`.
   * Binding anything else is a composition error.
   */
  bind<T>(token: Token<T>): BindToFluentSyntax<T>;
  /**
   * Wraps whatever another plugin binds to `token`, whenever it is resolved (plugin order does
   * not matter). Decorators run in plugin order; each receives the previous one's result.
   */
  decorate<T>(token: Token<T>, decorator: (service: T) => T): void;
  readonly hooks: TesseraHooks;
}

/**
 * What a plugin's `boot` and `shutdown` get: the composed container and hooks. Resolve services
 * here, not in `register`, where other plugins may not have bound theirs yet.
 */
export interface PluginRuntimeContext {
  readonly container: Container;
  readonly hooks: TesseraHooks;
  /** The service bound to `token`; throws when nothing is bound. */
  get<T>(token: Token<T>): T;
  /** The service bound to `token`, or `undefined` when nothing is. */
  getOptional<T>(token: Token<T>): T | undefined;
  /** Every value bound to a contribution token; `[]` when none. */
  getAll<T>(token: Token<T>): T[];
}

/**
 * A plugin: a named value that binds services and taps hooks. Made by a factory
 * function (`jsonlSessionStore(options)`), composed into presets.
 */
export interface Plugin {
  readonly name: string;
  /** Single-capability tokens this plugin binds. Two plugins may not provide the same one. */
  readonly provides?: readonly Token<unknown>[];
  /** Tokens some other plugin must provide. */
  readonly requires?: readonly Token<unknown>[];
  /** Tokens this plugin uses when some plugin provides them (it works without them). */
  readonly optional?: readonly Token<unknown>[];
  /** Multi-valued contribution points this plugin adds to (tools, commands…). */
  readonly contributes?: readonly Token<unknown>[];
  /** Names of plugins this one takes the place of; they are dropped from the graph. */
  readonly replaces?: string | readonly string[];
  /**
   * Synchronous: bind and tap, nothing else. Runs once per kernel the plugin is composed into.
   * State this kernel's boot or shutdown needs (a handle made here, a list filled at boot)
   * lives in the closure of a returned `PluginActivation`, so one plugin value composed into
   * two kernels keeps two separate states and needs no map keyed by kernel.
   */
  register?(context: PluginRegisterContext): void | PluginActivation;
  /** Async start-up, in plugin order, after every plugin registered. */
  boot?(context: PluginRuntimeContext): void | Promise<void>;
  /** Release, in reverse plugin order. */
  shutdown?(context: PluginRuntimeContext): void | Promise<void>;
}

/**
 * What `register` may return: this kernel's own start-up and release for the plugin. The
 * kernel calls `boot` right after the plugin's own `boot` and `shutdown` right before the
 * plugin's own `shutdown`.
 */
export interface PluginActivation {
  /** Start-up for this kernel; a rejection fails `createKernel`. */
  boot?(context: PluginRuntimeContext): void | Promise<void>;
  /** Release for this kernel; a failure is reported and the other plugins still shut down. */
  shutdown?(context: PluginRuntimeContext): void | Promise<void>;
}

/** Anything a preset may contain: plugins, nested lists, and falsy entries (ignored). */
export type PluginInput = Plugin | readonly PluginInput[] | false | null | undefined | 0 | '';

/** Returns `plugin` unchanged; it exists so a plugin literal is checked against {@link Plugin} and keeps its own type. */
export function definePlugin<P extends Plugin>(plugin: P): P {
  return plugin;
}

/** The plugins of a preset in order, nested arrays flattened and falsy entries dropped. */
export function flattenPlugins(inputs: readonly PluginInput[]): Plugin[] {
  const plugins: Plugin[] = [];
  const visit = (input: PluginInput): void => {
    if (!input) return;
    if (Array.isArray(input)) {
      for (const item of input as readonly PluginInput[]) visit(item);
      return;
    }
    plugins.push(input as Plugin);
  };
  for (const input of inputs) visit(input);
  return plugins;
}

/**
 * `base` with `replacements` swapped in: a base plugin is dropped when a replacement has its
 * name or provides one of its tokens. Presets use this for their `replace` option.
 */
export function replacePlugins(base: readonly Plugin[], replacements: readonly Plugin[]): Plugin[] {
  const kept = base.filter(
    (member) =>
      !replacements.some(
        (replacement) =>
          replacement.name === member.name ||
          (replacement.provides ?? []).some((token) => (member.provides ?? []).includes(token)),
      ),
  );
  return [...kept, ...replacements];
}
