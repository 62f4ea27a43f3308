import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, InteractiveSession } from '@tessera/kernel';
import { RecordingApprovalHandler } from '@tessera/kernel/testing';
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

  it('asks no one about a call outside the list: no PreToolUse hook (settings command or SDK callback) runs and no permission is asked', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-only-tools-'));
    // A settings command hook and an Agent SDK callback hook for both tools, each noting the calls it saw.
    const commandLog = join(dir, 'command-hook.jsonl');
    const hookFile = join(dir, 'hooks.json');
    writeFileSync(hookFile, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash|Write', hooks: [{ type: 'command', command: `cat >> '${commandLog}'; echo >> '${commandLog}'` }] }] } }));
    const callbackSaw: unknown[] = [];
    const callback = (input: Record<string, unknown>): Record<string, unknown> => {
      callbackSaw.push(input.tool_name);
      return {};
    };
    // No allow rule: Write asks, and Bash would.
    const approvals = new RecordingApprovalHandler({ behavior: 'deny', message: 'Not now.' });
    const provider = new ScriptedProvider({
      turns: [{ toolCalls: [{ id: 'a', name: 'Bash', input: { command: 'ls' } }, { id: 'b', name: 'Write', input: { file_path: join(dir, 'note.txt'), content: 'x' } }] }, { text: 'done' }],
    });
    const kernel = await createKernel({
      plugins: cliPreset({
        cwd: dir,
        home: dir,
        provider: { kind: 'demo' },
        sessionLog: false,
        sessionPersistence: false,
        tools: ['Read', 'Write'],
        hookFiles: [hookFile],
        hookConfigs: [{ config: { PreToolUse: [{ matcher: 'Bash|Write', hooks: [{ type: 'callback', id: 'hook_0', callback }] }] }, source: { file: 'test callbacks' } }],
        approvalHandler: approvals,
        replace: [scriptedProvider(provider)],
      }),
    });
    const session = new InteractiveSession({ kernel, cwd: dir });
    try {
      await session.submit('go');
      // The listed tool shows that both are live: its hooks ran and it was asked about.
      expect(callbackSaw).toEqual(['Write']);
      const commandSaw = readFileSync(commandLog, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { tool_name: string }).tool_name);
      expect(commandSaw).toEqual(['Write']);
      expect(approvals.requests.map((request) => request.toolName)).toEqual(['Write']);
      const results = (provider.requests[1]!.messages.at(-1)!.content as ReadonlyArray<{ type: string; content?: unknown }>).filter((block) => block.type === 'tool_result');
      expect(results.map((block) => block.content)).toEqual(['No such tool available: Bash. This session may use only the tools given to --tools (Read, Write) and MCP tools.', 'Not now.']);
    } finally {
      await session.shutdown();
      await kernel.shutdown();
    }
  });
});
