import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, ToolResultBlock } from '@tessera/contracts';
import { createKernel, type Kernel, type PluginInput } from '@tessera/kernel';
import type { ScriptedTurn } from '@tessera/plugin-provider-scripted';
import { builtinTools } from '@tessera/plugin-tools';
import { testPreset } from '@tessera/preset-test';

/** A fresh real directory (its real path, so it matches what the tools write to). */
export async function tempWorkspace(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-checkpoints-')));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A kernel with the scripted provider, the real file tools (no network ones) and `plugins`. */
export function kernelWith(turns: ScriptedTurn[], plugins: PluginInput[]): Promise<Kernel> {
  return createKernel({
    plugins: [...testPreset({ turns }), ...builtinTools({ exclude: ['WebFetch', 'WebSearch'] }), ...plugins],
  });
}

/** One prompt that makes the given tool calls and then answers "Done.". */
export function toolTurn(...calls: Array<{ name: string; input: unknown }>): ScriptedTurn[] {
  return [{ toolCalls: calls }, { text: 'Done.' }];
}

/** Every tool result of the history, in order. */
export function toolResults(history: readonly Message[]): ToolResultBlock[] {
  return history.flatMap((message) => (message.role === 'tool' ? message.content : []));
}

export function resultText(block: ToolResultBlock | undefined): string {
  if (block === undefined) return '';
  return typeof block.content === 'string' ? block.content : block.content.map((part) => ('text' in part ? part.text : '')).join('');
}
