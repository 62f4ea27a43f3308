import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@tessera/contracts';
import { createHooks } from '@tessera/kernel';
import { ManualProvider } from '@tessera/kernel/testing';
import type { TBackgroundTaskRunnerEvent } from '@tessera/plugin-background';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentDefinitionRegistry, BUILTIN_AGENT_DEFINITIONS } from './agent-definitions.js';
import { createInProcessSubagentRunner } from './in-process-subagent-runner.js';
import { SubagentManager } from './subagent-manager.js';
import type { ISubagentSpawnRequest } from './types.js';

const tool = (name: string): Tool => ({
  name,
  description: name,
  parameters: { type: 'object', properties: {} },
  execute: async () => ({ success: true, output: `${name} ran` }),
});
const TOOLS = ['Read', 'Write', 'Edit', 'Bash', 'Agent', 'Task', 'Grep'].map(tool);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-subagent-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const request = (extra: Partial<ISubagentSpawnRequest> = {}): ISubagentSpawnRequest => ({
  type: 'general-purpose',
  prompt: 'look around',
  cwd: dir,
  parentSessionId: 'parent-1',
  ...extra,
});

describe('createInProcessSubagentRunner', () => {
  it('runs a child session with the definition prompt, filtered tools, hooks, events and a transcript', async () => {
    const provider = new ScriptedProvider({
      turns: [{ text: ['Reading', '...'], toolCalls: [{ name: 'Read', input: {} }] }, { text: 'Found it.' }],
    });
    const hooks = createHooks();
    const fired: string[] = [];
    hooks.subagentStart.tap('t', ({ agentId, agentType, session }) => void fired.push(`start ${agentId} ${agentType} ${session.sessionId}`));
    hooks.subagentStop.tap('t', ({ agentId, result }) => void fired.push(`stop ${agentId} ${result}`));
    const events: TBackgroundTaskRunnerEvent[] = [];
    const runner = createInProcessSubagentRunner({ provider, tools: TOOLS, hooks, logsDir: dir });
    const handle = runner.start({ jobId: 'agent_1', request: request({ type: 'Explore' }), emit: (event) => events.push(event) });
    expect(handle.transcriptPath).toBe(join(dir, 'parent-1', 'subagents', 'agent_1.jsonl'));
    const result = await handle.result;
    expect(result).toEqual({ output: 'Found it.', metadata: { agentType: 'Explore' } });

    const sent = provider.requests[0]!;
    expect(sent.system).toContain('read-only exploration agent');
    expect(sent.tools.map((t) => t.name)).toEqual(['Read', 'Bash', 'Grep']); // no Write/Edit (Explore), no Agent/Task
    expect(fired).toEqual(['start agent_1 Explore parent-1', 'stop agent_1 Found it.']);
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'text_delta', 'tool_start', 'tool_end', 'text_delta']);

    const transcript = (await readFile(handle.transcriptPath!, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    const kinds = transcript.map((entry) => entry.event);
    expect(kinds).toEqual(expect.arrayContaining(['session_init', 'prompt', 'text_delta', 'tool_start', 'tool_end', 'final_output']));
    expect(transcript.every((entry) => entry.sessionId === 'agent_1')).toBe(true);
  });

  it("maps the child session's event stream: a tool's progress and a failure's code reach the job", async () => {
    const slow: Tool = {
      ...tool('Bash'),
      execute: async (_input, context) => {
        context.reportProgress?.({ message: 'cloned 1/2', fraction: 0.5 });
        return { success: false, output: 'exit 1', error: 'exit 1', errorCode: 'exit_code' };
      },
    };
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'git clone' } }] }, { text: 'Failed.' }] });
    const events: TBackgroundTaskRunnerEvent[] = [];
    const handle = createInProcessSubagentRunner({ provider, tools: [slow], logsDir: dir }).start({ jobId: 'agent_1', request: request(), emit: (event) => events.push(event) });
    await handle.result;
    // Before the stream, progress had no way out of the child session.
    expect(events).toEqual([
      { type: 'tool_start', toolName: 'Bash', toolCallId: 'toolu_0_0', action: 'Bash' },
      { type: 'heartbeat' },
      { type: 'tool_end', toolName: 'Bash', toolCallId: 'toolu_0_0', success: false, error: 'exit_code' },
      { type: 'text_delta', delta: 'Failed.' },
    ]);
    const transcript = (await readFile(handle.transcriptPath!, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    expect(transcript.find((entry) => entry.event === 'tool_progress')).toMatchObject({ toolName: 'Bash', toolCallId: 'toolu_0_0', progress: { message: 'cloned 1/2', fraction: 0.5 } });
    expect(transcript.find((entry) => entry.event === 'tool_end')).toMatchObject({ type: 'end', toolArgs: { command: 'git clone' }, success: false, errorCode: 'exit_code' });
  });

  it('applies an allowlist, inherits or maps the model, and rejects unknown agent types', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'ok' }, { text: 'ok' }, { text: 'ok' }] });
    const definitions = new AgentDefinitionRegistry([
      ...BUILTIN_AGENT_DEFINITIONS,
      { name: 'reviewer', description: 'd', systemPrompt: 'Review.', tools: ['Read', 'Bash(git diff:*)', 'Task'], model: 'sonnet', source: 'project' },
      { name: 'pinned', description: 'd', systemPrompt: 'P.', model: 'claude-x-1', source: 'project' },
    ]);
    const runner = createInProcessSubagentRunner({ provider, tools: TOOLS, definitions, parentModel: 'parent-model', modelAliases: {} });
    await runner.start({ jobId: 'agent_1', request: request({ type: 'reviewer' }) }).result;
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(['Read', 'Bash']);
    expect(provider.requests[0]!.model).toBe('parent-model'); // unmapped shortcut inherits
    const mapped = createInProcessSubagentRunner({ provider, tools: TOOLS, definitions, modelAliases: { sonnet: 'claude-sonnet-x' } });
    await mapped.start({ jobId: 'agent_2', request: request({ type: 'reviewer' }) }).result;
    expect(provider.requests[1]!.model).toBe('claude-sonnet-x');
    await runner.start({ jobId: 'agent_3', request: request({ type: 'pinned' }) }).result;
    expect(provider.requests[2]!.model).toBe('claude-x-1');
    expect(() => runner.start({ jobId: 'agent_4', request: request({ type: 'nope' }) })).toThrow(/Unknown agent type "nope".*general-purpose, Explore, Plan/);
  });

  it('validates ids before they form a transcript path', () => {
    const runner = createInProcessSubagentRunner({ provider: new ScriptedProvider(), tools: [], logsDir: dir });
    expect(() => runner.start({ jobId: 'agent_1', request: request({ parentSessionId: '../../etc' }) })).toThrow(/Invalid parent session id/);
    expect(() => runner.start({ jobId: '../x', request: request() })).toThrow(/Invalid subagent id/);
  });

  it('cancels a running child session', async () => {
    const provider = new ManualProvider();
    const hooks = createHooks();
    const stops: string[] = [];
    hooks.subagentStop.tap('t', ({ agentId }) => void stops.push(agentId));
    const handle = createInProcessSubagentRunner({ provider, tools: [], hooks }).start({ jobId: 'agent_1', request: request() });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(provider.calls).toHaveLength(1);
    await handle.cancel('stop');
    await expect(handle.result).rejects.toMatchObject({ name: 'AbortError' });
    expect(stops).toEqual(['agent_1']);
  });

  it('takes follow-up prompts while it runs, and refuses them once finished', async () => {
    const provider = new ManualProvider();
    const handle = createInProcessSubagentRunner({ provider, tools: [] }).start({ jobId: 'agent_1', request: request() });
    const first = await provider.waitForCall(1);
    await handle.send!('also check the tests');
    first.delta('first answer');
    first.finish();
    const second = await provider.waitForCall(2);
    expect(second.request.messages.at(-1)).toEqual({ role: 'user', content: 'also check the tests' });
    second.delta('tests are fine');
    second.finish();
    expect((await handle.result).output).toBe('tests are fine');
    await expect(handle.send!('more?')).rejects.toMatchObject({ code: 'subagent_finished' });
  });

  it('fails the job when a guard subagentStart tap throws', async () => {
    const hooks = createHooks();
    hooks.subagentStart.tap('guard', () => {
      throw new Error('no subagents today');
    });
    const handle = createInProcessSubagentRunner({ provider: new ScriptedProvider({ turns: [{ text: 'x' }] }), tools: [], hooks }).start({ jobId: 'agent_1', request: request() });
    await expect(handle.result).rejects.toThrow('no subagents today');
  });

  it('works under SubagentManager: ids, watchdog-visible progress, completion', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: ['a', 'b'] }] });
    const manager = new SubagentManager({ runner: createInProcessSubagentRunner({ provider, tools: [], logsDir: dir }) });
    const job = await manager.spawn(request({ label: 'Look' }));
    expect(job).toMatchObject({ type: 'general-purpose', label: 'Look', mode: 'foreground', status: 'running' });
    expect(job.id).toMatch(/^agent_1_[0-9a-f]{6}$/);
    expect(job.transcriptPath).toBe(join(dir, 'parent-1', 'subagents', `${job.id}.jsonl`));
    expect(await manager.wait(job.id)).toMatchObject({ status: 'completed', output: 'ab', lastActivityAt: expect.any(Number) });
  });
});
