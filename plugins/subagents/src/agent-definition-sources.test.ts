import { AgentDefinitionSourceContribution, type AgentDefinition, type AgentDefinitionSource } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { describe, expect, it } from 'vitest';
import { AgentDefinitions, subagents } from './index.js';

describe('agent definition sources', () => {
  it('feed the registry below local definitions and are read again on change', async () => {
    let current: AgentDefinition[] = [{ name: 'demo:helper', description: 'Helps', systemPrompt: 'Help.', source: 'plugin:demo' }];
    let listeners: Array<() => void> = [];
    const source: AgentDefinitionSource = {
      name: 'test-source',
      agents: () => current,
      onChange(listener) {
        listeners.push(listener);
        return () => (listeners = listeners.filter((item) => item !== listener));
      },
    };
    const kernel = await createKernel({
      plugins: testPreset({
        plugins: [
          subagents({ discover: false, worktree: false, definitions: [{ name: 'Plan', description: 'Mine', systemPrompt: 'Plan.', source: 'project' }] }),
          definePlugin({ name: 'source', contributes: [AgentDefinitionSourceContribution], register: ({ bind }) => void bind(AgentDefinitionSourceContribution).toConstantValue(source) }),
        ],
      }),
    });
    const registry = kernel.get(AgentDefinitions);
    expect(registry.get('demo:helper')?.source).toBe('plugin:demo');
    current = [{ name: 'Plan', description: 'From a plugin', systemPrompt: 'x', source: 'plugin:demo' }];
    for (const listener of listeners) listener();
    expect(registry.get('demo:helper')).toBeUndefined();
    expect(registry.get('Plan')?.description).toBe('Mine');
    expect(() => registry.require('demo:helper')).toThrow(/Unknown agent type/);
    await kernel.shutdown();
    expect(listeners).toHaveLength(0);
  });
});
