import { HookInventory, HooksConfigSourceContribution, type HooksConfig, type HooksConfigSource } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { describe, expect, it } from 'vitest';
import { hooksPlugin } from './index.js';

/** A source whose configuration a test changes, telling its listeners as a bundle plugin registry does. */
function changingSource(): HooksConfigSource & { set(config: HooksConfig): void } {
  let current: HooksConfig = {};
  let listeners: Array<() => void> = [];
  return {
    name: 'test-source',
    configs: () => [{ config: current, source: { file: '/plugins/demo/hooks/hooks.json', pluginRoot: '/plugins/demo' } }],
    onChange(listener) {
      listeners.push(listener);
      return () => (listeners = listeners.filter((item) => item !== listener));
    },
    set(config) {
      current = config;
      for (const listener of listeners) listener();
    },
  };
}

describe('hook configuration sources', () => {
  it('are merged after the settings hooks and read again when the source changes', async () => {
    const source = changingSource();
    source.set({ Stop: [{ hooks: [{ type: 'command', command: 'echo plugin' }] }] });
    const kernel = await createKernel({
      plugins: testPreset({
        plugins: [
          hooksPlugin({ configs: [{ config: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo settings' }] }] }, source: { file: '/settings.json' } }] }),
          definePlugin({ name: 'source', contributes: [HooksConfigSourceContribution], register: ({ bind }) => void bind(HooksConfigSourceContribution).toConstantValue(source) }),
        ],
      }),
    });
    const listed = () => kernel.get(HookInventory).list().map((hook) => `${hook.event}:${hook.summary}:${hook.file}`);
    expect(listed()).toEqual(['PreToolUse:echo settings:/settings.json', 'Stop:echo plugin:/plugins/demo/hooks/hooks.json']);
    source.set({});
    expect(listed()).toEqual(['PreToolUse:echo settings:/settings.json']);
    source.set({ SessionStart: [{ hooks: [{ type: 'command', command: 'echo again' }] }] });
    expect(listed()).toHaveLength(2);
    expect(kernel.describe().plugins.find((plugin) => plugin.name === 'claude-hooks')!.optional).toContain('HooksConfigSource');
    await kernel.shutdown();
  });
});
