import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, InteractiveSession } from '@tessera/kernel';
import { ScriptedProvider, scriptedProvider } from '@tessera/plugin-provider-scripted';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPreset } from './preset.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('--tools (onlyTools)', () => {
  it('a call to a tool outside the list is answered as Claude Code answers it: "No such tool available: <Name>", then why', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-only-tools-'));
    const provider = new ScriptedProvider({
      turns: [
        // Bash is left out of the session; the agent command tool exists but is not listed.
        { toolCalls: [{ id: 'a', name: 'Bash', input: { command: 'ls' } }, { id: 'b', name: 'tessera_command_agent', input: { args: 'Explore look around' } }] },
        { text: 'done' },
      ],
    });
    const kernel = await createKernel({
      plugins: cliPreset({ cwd: dir, home: dir, provider: { kind: 'demo' }, sessionLog: false, sessionPersistence: false, tools: ['Read', 'Grep'], replace: [scriptedProvider(provider)] }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    try {
      await session.submit('go');
      expect(provider.requests[0]!.tools.map((tool) => tool.name).sort()).toEqual(['Grep', 'Read']);
      const results = (provider.requests[1]!.messages.at(-1)!.content as ReadonlyArray<{ type: string; content?: unknown }>).filter((block) => block.type === 'tool_result');
      expect(results.map((block) => block.content)).toEqual([
        'No such tool available: Bash. This session may use only the tools given to --tools (Read, Grep) and MCP tools.',
        'No such tool available: tessera_command_agent. This session may use only the tools given to --tools (Read, Grep) and MCP tools.',
      ]);
    } finally {
      await session.shutdown();
      await kernel.shutdown();
    }
  });
});
