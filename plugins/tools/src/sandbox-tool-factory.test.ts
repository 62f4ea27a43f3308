import { SandboxPaths, SandboxToolFactory, ShellDirectories } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { describe, expect, it } from 'vitest';
import { builtinTools } from './plugins.js';
import { InMemorySandboxClient } from './sandbox/in-memory-sandbox-client.js';
import { sandboxToolFactoryPlugin } from './sandbox-tool-factory.js';

describe('sandboxToolFactoryPlugin', () => {
  it('is bound by builtinTools() without a sandbox (not with one) and builds the composed tools only, with SandboxPaths and a sandbox ShellDirectories', async () => {
    const kernel = await createKernel({ plugins: [...testPreset({ turns: [] }), ...builtinTools({ exclude: ['Edit'] })] });
    const factory = kernel.get(SandboxToolFactory);
    const client = new InMemorySandboxClient();
    const set = factory.create({ client, root: '/srv/work' });
    expect(set.tools.map((tool) => tool.name)).toEqual(['Bash', 'Read', 'Write']);
    const services = new Map(set.services.map((override) => [override.token, override.value]));
    expect(services.get(SandboxPaths)).toEqual({ root: '/srv/work' });
    const shell = services.get(ShellDirectories) as ShellDirectories;
    expect(shell.cwdFor('no-session')).toBeUndefined();
    // The kernel's own services know nothing of the sandbox.
    expect(kernel.getOptional(SandboxPaths)).toBeUndefined();
    await kernel.shutdown();

    const sandboxed = await createKernel({ plugins: [...testPreset({ turns: [] }), ...builtinTools({ sandbox: { client } })] });
    expect(sandboxed.getOptional(SandboxToolFactory)).toBeUndefined();
    expect(sandboxed.getOptional(SandboxPaths)).toEqual({ root: '/workspace' });
    await sandboxed.shutdown();
  });

  it('refuses a client that cannot run the tools, and a relative root', async () => {
    const kernel = await createKernel({ plugins: [...testPreset({ turns: [] }), ...builtinTools()] });
    const factory = kernel.get(SandboxToolFactory);
    expect(() => factory.create({ client: { snapshot: async () => 'id' } })).toThrow(
      expect.objectContaining({ code: 'invalid_sandbox_client', message: expect.stringContaining('run, readFile, writeFile, stat, mkdir') }),
    );
    expect(() => factory.create({ client: new InMemorySandboxClient(), root: 'workspace' })).toThrow(expect.objectContaining({ code: 'invalid_sandbox_root' }));
    await kernel.shutdown();
    expect(() => sandboxToolFactoryPlugin({ root: 'relative' })).toThrow(expect.objectContaining({ code: 'invalid_plugin_options' }));
    expect(() => sandboxToolFactoryPlugin({ tools: ['Grep' as never] })).toThrow(expect.objectContaining({ code: 'invalid_plugin_options', message: expect.stringContaining('"Grep"') }));
  });
});
