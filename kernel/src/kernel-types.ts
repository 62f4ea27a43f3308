import type { Provider, ServiceOverride, Tool } from '@tessera/contracts';
import type { PluginInput } from './plugin.js';
import type { SessionOptions } from './session-options.js';

/** What `createKernel` composes. `plugins` may nest arrays and contain falsy entries (see {@link PluginInput}). */
export interface CreateKernelOptions {
  plugins: readonly PluginInput[];
}

/** One plugin of a {@link KernelDescription}: its name, its tokens by name, and the hook taps it made. */
export interface PluginDescription {
  name: string;
  provides: string[];
  requires: string[];
  /** Tokens the plugin uses when present. */
  optional: string[];
  contributes: string[];
  replaces: string[];
  /** Hook taps this plugin made while registering, in hook order (`kernel.hooks`), then tap order. */
  taps: Array<{ hook: string; name: string; stage: number }>;
}

/** A kernel's composition as plain data (`kernel.describe()`), for `/doctor` and tests. */
export interface KernelDescription {
  plugins: PluginDescription[];
  /** Plugins dropped by `replaces`: name → replacing plugin. */
  replaced: Record<string, string>;
  /** Token → plugins that decorate it, in order. */
  decorated: Record<string, string[]>;
  /** Taps per hook, in call order. */
  hooks: Record<string, Array<{ name: string; stage: number }>>;
}

/** What `kernel.createSession()` takes: the Session options the container does not supply. */
export type KernelSessionOptions = Omit<SessionOptions, 'provider' | 'hooks' | 'clock'> & {
  /** Use this provider instead of the kernel's (e.g. a subagent model). */
  provider?: Provider;
  /**
   * Tools that take the place of the contributed tools (`ToolContribution`) of the same name in
   * this session alone — a sandboxed Bash instead of the host one; one whose name no contributed
   * tool has is added. Of two with one name, the later wins. (`tools` are added after these and
   * must not share a name with any.) Subagents this session starts get the same replacements.
   */
  replaceTools?: readonly Tool[];
  /**
   * Values this session's services (`session.services.get` / `getOptional`) return instead of
   * the kernel's bindings, so the plugins that look a service up per session (the permission
   * layer, the hook runner, checkpoints) see them for this session and no other. Of two for one
   * token, the later wins. Subagents this session starts get the same overrides.
   */
  serviceOverrides?: readonly ServiceOverride[];
  /**
   * Names of contributed tools (after `replaceTools`) this session does not offer: the host's
   * BashOutput and KillShell in a sandboxed session, where there is nothing of theirs to run. A
   * call to one is an unknown tool. `tools` are not affected. Subagents this session starts lose
   * the same tools.
   */
  removeTools?: readonly string[];
};

/** What an open session was created with that sessions it starts (a subagent's child) must keep. */
export interface KernelSessionScope {
  /** The session's `KernelSessionOptions.replaceTools`. */
  readonly replaceTools: readonly Tool[];
  /** The session's `KernelSessionOptions.serviceOverrides`. */
  readonly serviceOverrides: readonly ServiceOverride[];
  /** The session's `KernelSessionOptions.removeTools`. */
  readonly removeTools: readonly string[];
}
