import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import * as acp from '@agentclientprotocol/sdk';
import type { InteractiveSession } from '@tessera/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { PERMISSION_OPTION } from './acp-permissions.js';
import { interactiveOf, openSession, startAcpHarness, type AcpHarness, type PermissionScript } from './acp.test-helper.js';

let harness: AcpHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const start = async (options: Parameters<typeof startAcpHarness>[0] = {}): Promise<AcpHarness> => (harness = await startAcpHarness(options));
const prompt = (h: AcpHarness, sessionId: string, text: string) => h.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

/** A rejected request's JSON-RPC error. */
async function rpcError(work: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await work;
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error('expected the request to fail');
}

describe('initialize and session/new', () => {
  it('negotiates v1 and advertises load, embedded context, modes and slash commands', async () => {
    const h = await start();
    const init = await h.agent.request(acp.methods.agent.initialize, { protocolVersion: 7, clientCapabilities: {} });
    expect(init.protocolVersion).toBe(acp.PROTOCOL_VERSION);
    expect(init.agentCapabilities).toMatchObject({ loadSession: true, promptCapabilities: { image: false, embeddedContext: true } });
    const created = await h.agent.request(acp.methods.agent.session.new, { cwd: h.dir, mcpServers: [] });
    expect(created.sessionId).toMatch(/\S/);
    expect(created.modes?.currentModeId).toBe('default');
    expect(created.modes?.availableModes.map((mode) => mode.id)).toEqual(['default', 'acceptEdits', 'plan', 'dontAsk']);
    await h.waitFor(() => h.of('available_commands_update').length > 0, 'available_commands_update');
    const commands = h.of('available_commands_update', created.sessionId)[0]!.availableCommands;
    expect(commands.find((command) => command.name === 'rename')).toMatchObject({ input: { hint: '<name>' } });
    expect(commands.map((command) => command.name)).toContain('help');
  });
});

describe('session/prompt', () => {
  it('sends the plan when the model keeps its todo list with the TodoWrite tool, with no permission asked', async () => {
    const todos = (statuses: string[]) => ['Read the code', 'Fix the bug', 'Run the tests'].map((content, index) => ({ content, status: statuses[index]!, activeForm: `${content}…` }));
    const h = await start({
      turns: () => [
        { text: 'Planning. ', toolCalls: [{ id: 'todo-1', name: 'TodoWrite', input: { todos: todos(['in_progress', 'pending', 'pending']) } }] },
        { toolCalls: [{ id: 'todo-2', name: 'TodoWrite', input: { todos: todos(['completed', 'completed', 'in_progress']) } }] },
        { text: 'Done.' },
      ],
    });
    const sessionId = await openSession(h);
    const { stopReason } = await prompt(h, sessionId, 'Fix the bug');
    expect(stopReason).toBe('end_turn');
    const plans = h.of('plan', sessionId);
    expect(plans.map((plan) => plan.entries.map((entry) => entry.status))).toEqual([
      ['in_progress', 'pending', 'pending'],
      ['completed', 'completed', 'in_progress'],
    ]);
    expect(plans[0]!.entries[1]).toEqual({ content: 'Fix the bug', status: 'pending', priority: 'medium' });
    expect(h.permissionRequests).toEqual([]);
    const ends = h.of('tool_call_update', sessionId).filter((update) => update.status === 'completed');
    expect(ends.map((update) => update.toolCallId)).toEqual(['todo-1', 'todo-2']);
  });

  it('streams thoughts, text and tool calls with kinds, locations and diffs, then ends the turn', async () => {
    const h = await start({
      allow: ['Edit', 'Write'],
      turns: (dir) => [
        { thinking: 'Read it first.', text: ['Reading ', 'a.txt. '], toolCalls: [{ id: 'read-1', name: 'Read', input: { file_path: join(dir, 'a.txt') } }] },
        { text: 'Editing. ', toolCalls: [{ id: 'edit-1', name: 'Edit', input: { file_path: join(dir, 'a.txt'), old_string: 'world', new_string: 'ACP' } }] },
        { text: 'Writing. ', toolCalls: [{ id: 'write-1', name: 'Write', input: { file_path: join(dir, 'b.txt'), content: 'new file\n' } }] },
        { text: 'Done.' },
      ],
    });
    writeFileSync(join(h.dir, 'a.txt'), 'hello world\n');
    const sessionId = await openSession(h);
    const { stopReason } = await prompt(h, sessionId, 'Change a.txt and add b.txt');

    expect(stopReason).toBe('end_turn');
    expect(readFileSync(join(h.dir, 'a.txt'), 'utf8')).toBe('hello ACP\n');
    expect(h.of('agent_thought_chunk').map((update) => (update.content as { text: string }).text).join('')).toBe('Read it first.');
    expect(h.of('agent_message_chunk').map((update) => (update.content as { text: string }).text).join('')).toBe('Reading a.txt. Editing. Writing. Done.');

    const calls = h.of('tool_call');
    expect(calls.map((call) => [call.toolCallId, call.kind, call.status, call.title])).toEqual([
      ['read-1', 'read', 'pending', `Read ${join(h.dir, 'a.txt')}`],
      ['edit-1', 'edit', 'pending', `Edit ${join(h.dir, 'a.txt')}`],
      ['write-1', 'edit', 'pending', `Write ${join(h.dir, 'b.txt')}`],
    ]);
    expect(calls[1]!.content).toEqual([{ type: 'diff', path: join(h.dir, 'a.txt'), oldText: 'world', newText: 'ACP' }]);
    expect(calls[2]!.content).toEqual([{ type: 'diff', path: join(h.dir, 'b.txt'), newText: 'new file\n' }]);

    const updates = h.of('tool_call_update');
    const editEnd = updates.find((update) => update.toolCallId === 'edit-1' && update.status === 'completed')!;
    expect(editEnd.content).toEqual([{ type: 'diff', path: join(h.dir, 'a.txt'), oldText: 'world', newText: 'ACP' }]);
    expect(editEnd.locations).toEqual([{ path: join(h.dir, 'a.txt'), line: 1 }]);
    expect(updates.find((update) => update.toolCallId === 'read-1' && update.status === 'completed')).toBeDefined();
    // Read's output arrives once the batch's tool message is in history.
    const readOutput = updates.find((update) => update.toolCallId === 'read-1' && update.content)!;
    expect(JSON.stringify(readOutput.content)).toContain('hello world');
  });

  it('resolves max_turn_requests when the round limit stops the turn', async () => {
    // The kernel's own round limit is not set by the CLI; a tool message last is what it leaves.
    const { stopReasonOf } = await import('./acp-session.js');
    expect(stopReasonOf([{ role: 'tool', content: [] }])).toBe('max_turn_requests');
    expect(stopReasonOf([{ role: 'assistant', content: [], state: 'complete', stopReason: 'refusal' }])).toBe('refusal');
    expect(stopReasonOf([{ role: 'assistant', content: [], state: 'complete', stopReason: 'max_tokens' }])).toBe('max_tokens');
  });
});

describe('session/request_permission', () => {
  const writeTurns = (dir: string) => [{ toolCalls: [{ id: 'w-1', name: 'Write', input: { file_path: join(dir, 'c.txt'), content: 'c\n' } }] }, { text: 'ok' }];

  it('allow once runs the call; the request carries the tool call and three options', async () => {
    const h = await start({ ask: ['Write'], turns: writeTurns, permission: () => PERMISSION_OPTION.allowOnce });
    const sessionId = await openSession(h);
    expect((await prompt(h, sessionId, 'write c')).stopReason).toBe('end_turn');
    expect(existsSync(join(h.dir, 'c.txt'))).toBe(true);
    const [asked] = h.permissionRequests;
    expect(asked).toMatchObject({ sessionId, toolCall: { toolCallId: 'w-1', kind: 'edit', content: [{ type: 'diff', newText: 'c\n' }] } });
    expect(asked!.options.map((option) => option.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    expect(h.of('tool_call_update').filter((update) => update.toolCallId === 'w-1').map((update) => update.status)).toEqual(['in_progress', 'completed']);
  });

  it('reject refuses the call and the model is told why', async () => {
    const h = await start({ ask: ['Write'], turns: writeTurns, permission: () => PERMISSION_OPTION.rejectOnce });
    const sessionId = await openSession(h);
    expect((await prompt(h, sessionId, 'write c')).stopReason).toBe('end_turn');
    expect(existsSync(join(h.dir, 'c.txt'))).toBe(false);
    const updates = h.of('tool_call_update').filter((update) => update.toolCallId === 'w-1');
    expect(updates[0]!.status).toBe('failed');
    expect(JSON.stringify(updates.at(-1)!.content)).toContain('rejected this tool call in the editor');
  });

  it('allow always is remembered for the session (allow-session)', async () => {
    // No ask rule: default mode asks for edits; "always" remembers the suggested rule (this file).
    const h = await start({
      permission: () => PERMISSION_OPTION.allowAlways,
      turns: (dir) => [
        { toolCalls: [{ id: 'w-1', name: 'Write', input: { file_path: join(dir, 'x.txt'), content: 'x' } }] },
        { toolCalls: [{ id: 'e-1', name: 'Edit', input: { file_path: join(dir, 'x.txt'), old_string: 'x', new_string: 'y' } }] },
        { text: 'ok' },
      ],
    });
    const sessionId = await openSession(h);
    await prompt(h, sessionId, 'write two');
    expect(h.permissionRequests).toHaveLength(1);
    expect(h.permissionRequests[0]!.options[1]!.name).toBe(`Always allow Edit(/${join(h.dir, 'x.txt')}) in this session`);
    expect(readFileSync(join(h.dir, 'x.txt'), 'utf8')).toBe('y');
  });
});

describe('session/cancel', () => {
  it('aborts a streaming turn: the prompt resolves cancelled', async () => {
    const h = await start({ turns: () => [{ text: Array.from({ length: 200 }, (_, index) => `word${index} `), delayMs: 10 }] });
    const sessionId = await openSession(h);
    const running = prompt(h, sessionId, 'talk a lot');
    await h.waitFor(() => h.of('agent_message_chunk').length >= 2, 'the first chunks');
    const second = await rpcError(prompt(h, sessionId, 'and another'));
    expect(second).toMatchObject({ code: -32600, message: expect.stringContaining('already running a prompt') });
    await h.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await running).stopReason).toBe('cancelled');
    expect(h.of('agent_message_chunk').length).toBeLessThan(200);
  });

  it('cancels a pending permission request (the call is refused)', async () => {
    let answer: (value: string) => void = () => undefined;
    const permission: PermissionScript = () => new Promise((resolve) => (answer = resolve));
    const h = await start({ ask: ['Write'], turns: (dir) => [{ toolCalls: [{ id: 'w-1', name: 'Write', input: { file_path: join(dir, 'c.txt'), content: 'c' } }] }, { text: 'never' }], permission });
    const sessionId = await openSession(h);
    const running = prompt(h, sessionId, 'write c');
    await h.waitFor(() => h.permissionRequests.length === 1, 'the permission request');
    await h.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    answer('cancel');
    expect((await running).stopReason).toBe('cancelled');
    expect(existsSync(join(h.dir, 'c.txt'))).toBe(false);
  });

  describe('sent before the model turn started (a command is still being resolved)', () => {
    const writeTurns = (dir: string) => [{ text: 'Writing anyway. ', toolCalls: [{ id: 'w-1', name: 'Write', input: { file_path: join(dir, 'after-cancel.txt'), content: 'x' } }] }, { text: 'done' }];

    /** Records the prompts `interactive` was given to run. */
    function recordSubmits(interactive: InteractiveSession): string[] {
      const submitted: string[] = [];
      const submit = interactive.submit.bind(interactive);
      interactive.submit = (input, ...rest) => (submitted.push(input), submit(input, ...rest));
      return submitted;
    }

    /** Sends `text`, cancels while the (slowed) command is resolved, and answers the stop reason. */
    async function cancelDuringCommand(h: AcpHarness, sessionId: string, text: string): Promise<acp.StopReason> {
      const running = prompt(h, sessionId, text);
      await delay(10);
      await h.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      return (await running).stopReason;
    }

    it('a slash word that is no command is not sent to the model', async () => {
      const h = await start({ allow: ['Write'], turns: writeTurns });
      const sessionId = await openSession(h);
      const interactive = interactiveOf(h, sessionId);
      // Resolving a slash word reads skill sources from disk; the delay makes that window wide.
      const execute = interactive.executeCommand.bind(interactive);
      interactive.executeCommand = async (...args) => (await delay(50), execute(...args));
      const submitted = recordSubmits(interactive);
      expect(await cancelDuringCommand(h, sessionId, '/nosuch please write a file')).toBe('cancelled');
      expect(h.of('agent_message_chunk', sessionId)).toEqual([]);
      expect(existsSync(join(h.dir, 'after-cancel.txt'))).toBe(false);
      // Not submitted at all: no checkpoint, no hook, no save for a prompt the user stopped.
      expect(submitted).toEqual([]);
    });

    it("a command's follow-up prompt (prompt-submit-requested) is not run", async () => {
      const h = await start({ turns: () => [{ text: 'follow-up ran' }] });
      const sessionId = await openSession(h);
      // As an MCP prompt command does: a network round trip, then a prompt to submit.
      const interactive = interactiveOf(h, sessionId);
      interactive.executeCommand = async () => (await delay(50), { success: true, message: '', effects: [{ type: 'prompt-submit-requested', text: 'go' }] });
      const submitted = recordSubmits(interactive);
      expect(await cancelDuringCommand(h, sessionId, '/mcp-prompt')).toBe('cancelled');
      expect(h.of('agent_message_chunk', sessionId)).toEqual([]);
      expect(submitted).toEqual([]);
    });

    it('a turn the command starts itself (a skill injecting its prompt) is aborted as it starts', async () => {
      const h = await start({ allow: ['Write'], turns: writeTurns });
      const sessionId = await openSession(h);
      const interactive: InteractiveSession = interactiveOf(h, sessionId);
      interactive.executeCommand = async () => {
        await delay(50);
        await interactive.submit('the skill says: write a file');
        return { success: true, message: '' };
      };
      expect(await cancelDuringCommand(h, sessionId, '/write-skill')).toBe('cancelled');
      expect(h.of('agent_message_chunk', sessionId)).toEqual([]);
      expect(existsSync(join(h.dir, 'after-cancel.txt'))).toBe(false);
    });
  });
});

describe('session/close', () => {
  it('answers a prompt whose tool is still running with cancelled', async () => {
    const h = await start({ allow: ['Bash'], turns: () => [{ toolCalls: [{ id: 'b-1', name: 'Bash', input: { command: 'sleep 3' } }] }, { text: 'never' }] });
    const sessionId = await openSession(h);
    const running = prompt(h, sessionId, 'sleep');
    await h.waitFor(() => h.of('tool_call', sessionId).length === 1, 'the tool call');
    await delay(100);
    await h.agent.request(acp.methods.agent.session.close, { sessionId });
    // The aborted batch's tool message is last in history: without the cancel, that read as max_turn_requests.
    expect((await running).stopReason).toBe('cancelled');
  });
});

describe('session/load', () => {
  it('resumes a stored session and replays its history before answering', async () => {
    const h = await start({
      allow: ['Write'],
      turns: (dir) => [{ text: 'Writing. ', toolCalls: [{ id: 'w-1', name: 'Write', input: { file_path: join(dir, 'r.txt'), content: 'r\n' } }] }, { text: 'All done.' }],
    });
    const sessionId = await openSession(h);
    await prompt(h, sessionId, 'make r.txt');
    await h.agent.request(acp.methods.agent.session.close, { sessionId });
    const listed = await h.agent.request(acp.methods.agent.session.list, {});
    expect(listed.sessions.map((session) => session.sessionId)).toContain(sessionId);

    h.updates.length = 0;
    const loaded = await h.agent.request(acp.methods.agent.session.load, { sessionId, cwd: h.dir, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe('default');
    const replay = h.updates.filter((note) => note.sessionId === sessionId).map((note) => note.update);
    expect(replay.map((update) => update.sessionUpdate)).toEqual(['user_message_chunk', 'agent_message_chunk', 'tool_call', 'agent_message_chunk']);
    expect(replay[0]).toMatchObject({ content: { type: 'text', text: 'make r.txt' } });
    expect(replay[2]).toMatchObject({ toolCallId: 'w-1', status: 'completed', content: [{ type: 'diff', path: join(h.dir, 'r.txt'), newText: 'r\n' }] });
    expect(replay[3]).toMatchObject({ content: { text: 'All done.' } });
  });

  it("refuses to load a session into another folder than its own (invalid params, naming the session's folder)", async () => {
    const h = await start({ turns: () => [{ text: 'Stored.' }] });
    const sessionId = await openSession(h);
    await prompt(h, sessionId, 'remember');
    await h.agent.request(acp.methods.agent.session.close, { sessionId });
    const other = join(h.dir, 'other');
    mkdirSync(other);
    const error = await rpcError(h.agent.request(acp.methods.agent.session.load, { sessionId, cwd: other, mcpServers: [] }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(`belongs to ${h.dir}`);
    // The same for a session still open on this connection.
    const open = await openSession(h);
    const live = await rpcError(h.agent.request(acp.methods.agent.session.load, { sessionId: open, cwd: other, mcpServers: [] }));
    expect(live.code).toBe(-32602);
    expect(live.message).toContain(`belongs to ${h.dir}`);
  });

  it('opens a stored session once when two loads of it arrive together', async () => {
    const h = await start({ turns: () => [{ text: 'Stored.' }] });
    const sessionId = await openSession(h);
    await prompt(h, sessionId, 'remember');
    await h.agent.request(acp.methods.agent.session.close, { sessionId });
    const { open, list } = h.sessions;
    const opened: InteractiveSession[] = [];
    // A file-backed store (the CLI's) reads the disk before the open: both loads pass the "open here?" check.
    h.sessions.list = async (cwd) => (await delay(20), list(cwd));
    h.sessions.open = async (request) => {
      const session = await open(request);
      opened.push(session);
      return session;
    };
    const load = () => h.agent.request(acp.methods.agent.session.load, { sessionId, cwd: h.dir, mcpServers: [] });
    const answers = await Promise.all([load(), load()]);
    expect(answers.map((answer) => answer.modes?.currentModeId)).toEqual(['default', 'default']);
    expect(opened).toHaveLength(1);
    expect(interactiveOf(h, sessionId)).toBe(opened[0]);
  });

  it('answers an unknown session id with a resource-not-found error', async () => {
    const h = await start();
    await openSession(h);
    const error = await rpcError(h.agent.request(acp.methods.agent.session.load, { sessionId: 'nope', cwd: h.dir, mcpServers: [] }));
    expect(error.code).toBe(-32002);
    expect(error.message).toContain('No stored session "nope"');
  });
});

describe('slash commands', () => {
  it('runs a command named at the start of a prompt without calling the model', async () => {
    const h = await start();
    const sessionId = await openSession(h);
    expect((await prompt(h, sessionId, '/rename my work')).stopReason).toBe('end_turn');
    expect(h.of('agent_message_chunk').map((update) => (update.content as { text: string }).text)).toEqual(['Session renamed to "my work".']);
    expect(h.of('session_info_update')).toEqual([{ sessionUpdate: 'session_info_update', title: 'my work' }]);
  });

  it('/permissions in a prompt cannot switch to a mode the client was not offered', async () => {
    const h = await start();
    const sessionId = await openSession(h);
    expect((await prompt(h, sessionId, '/permissions bypassPermissions')).stopReason).toBe('end_turn');
    expect(h.of('agent_message_chunk').map((update) => (update.content as { text: string }).text).join('')).toContain('not allowed here');
    expect(h.of('current_mode_update')).toEqual([]);
    const refused = await rpcError(h.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'bypassPermissions' }));
    expect(refused.message).toContain('bypassPermissions');
  });

  it('tells the client of a mode a command switched to (current_mode_update), not of one it set itself', async () => {
    const h = await start({ turns: () => [{ text: 'planning' }] });
    const sessionId = await openSession(h);
    expect((await prompt(h, sessionId, '/permissions acceptEdits')).stopReason).toBe('end_turn');
    expect(interactiveOf(h, sessionId).getSession().getPermissionMode()).toBe('acceptEdits');
    expect(h.of('current_mode_update', sessionId)).toEqual([{ sessionUpdate: 'current_mode_update', currentModeId: 'acceptEdits' }]);
    await h.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'plan' });
    await prompt(h, sessionId, 'make a plan');
    expect(h.of('current_mode_update', sessionId)).toHaveLength(1);
  });

  it('sends a slash word that is no command to the model', async () => {
    const h = await start({ turns: () => [{ text: 'Not a command.' }] });
    const sessionId = await openSession(h);
    expect((await prompt(h, sessionId, '/nosuch thing')).stopReason).toBe('end_turn');
    expect(h.of('agent_message_chunk').map((update) => (update.content as { text: string }).text).join('')).toBe('Not a command.');
  });
});

describe('bad input', () => {
  it('answers malformed and invalid messages with JSON-RPC errors and keeps serving', async () => {
    const h = await start({ turns: () => [{ text: 'still here' }] });
    h.writeRaw('{not json\n');
    h.writeRaw('[1, 2]\n');
    await h.waitFor(() => h.lines.length >= 2, 'two error responses');
    expect(h.lines.map((line) => (JSON.parse(line) as { error: { code: number } }).error.code)).toEqual([-32700, -32600]);

    const early = await rpcError(h.agent.request(acp.methods.agent.session.new, { cwd: h.dir, mcpServers: [] }));
    expect(early.code).toBe(-32600);

    const sessionId = await openSession(h);
    expect((await rpcError(h.agent.request('session/fly', {}))).code).toBe(-32601);
    expect((await rpcError(h.agent.request(acp.methods.agent.session.delete, { sessionId }))).code).toBe(-32601);
    const relative = await rpcError(h.agent.request(acp.methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] }));
    expect(relative).toMatchObject({ code: -32602 });
    expect(relative.message).toContain('cwd must be an absolute path');
    expect((await rpcError(h.agent.request(acp.methods.agent.session.new, { cwd: 42 } as never))).code).toBe(-32602);
    const unknown = await rpcError(prompt(h, 'no-such-session', 'hi'));
    expect(unknown.code).toBe(-32002);
    expect(unknown.message).toContain('not open on this connection');
    const image = await rpcError(h.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }));
    expect(image.message).toContain('does not accept image content');
    const badMode = await rpcError(h.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'yolo' }));
    expect(badMode.message).toContain('Unknown mode "yolo"');

    expect((await prompt(h, sessionId, 'hello')).stopReason).toBe('end_turn');
  });
});
