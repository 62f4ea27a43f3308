import type { HookEventName } from './hooks-config.js';
import { createToken } from './token.js';

/**
 * The composed application as data, for `/doctor` and diagnostics: the kernel binds it. The
 * shape is `Kernel.describe()`'s (plugins with provides / requires / optional / contributes /
 * taps, replaced plugins, decorators, hook taps).
 */
export interface KernelInfo {
  /** The composition as it is now: plugins, replacements and hook taps. */
  describe(): {
    plugins: ReadonlyArray<{ name: string; provides: string[]; requires: string[]; optional: string[]; contributes: string[]; replaces: string[] }>;
    replaced: Record<string, string>;
    hooks: Record<string, ReadonlyArray<{ name: string; stage: number }>>;
  };
}

/** The kernel's self-description. The kernel binds it unless a plugin already has; `/doctor` reads it. */
export const KernelInfo = createToken<KernelInfo>('KernelInfo');

/** One configured hook handler, as `/hooks` lists it. */
export interface HookInventoryEntry {
  event: HookEventName;
  matcher?: string;
  /** `command`, `http`, `prompt`, `agent`. */
  type: string;
  /** The command, URL or prompt, shortened for display. */
  summary: string;
  /** The settings or hooks file it came from. */
  file: string;
  /** Where in that file (`hooks.Stop[0].hooks[1]`). */
  location: string;
}

/** What hooks are configured and where from (the hooks plugin provides it). */
export interface HookInventory {
  /** Every configured hook handler, in configuration order (settings files first, then contributed sources). */
  list(): readonly HookInventoryEntry[];
}

/** The configured hooks, bound by `hooksPlugin()`. Optional: `/hooks` reads it. */
export const HookInventory = createToken<HookInventory>('HookInventory');
