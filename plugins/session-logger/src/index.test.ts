import { readdir, readFile, rm, mkdtemp, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Compaction, Diagnostics, SessionLogger, type AssistantMessage, type DiagnosticReport, type ProviderRequest, type Tool } from '@tessera/contracts';
import { createKernel, definePlugin, Stage } from '@tessera/kernel';
import { ManualProvider, RecordingSessionLogger } from '@tessera/kernel/testing';
import { ScriptedProvider, type ScriptedTurn } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { FileSessionLogger, readSessionLog, replaySessionLogEntries, sessionLogger, validateSessionReplayLogEntries } from './index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-session-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const echo: Tool = {
  name: 'echo',
  description: 'echoes',
  parameters: { type: 'object' },
  execute: async (input) => ({ success: true, output: String((input as { text: string }).text) }),
};

/** A scripted provider that also reports provider-native payloads, as real providers do. */
class NativeReportingProvider extends ScriptedProvider {
  override async stream(request: ProviderRequest): Promise<AssistantMessage> {
    request.onProviderNativeRawPayload?.({ provider: this.name, apiSurface: 'messages', payloadKind: 'request', payload: { headers: { 'x-api-key': 'sk-secret' } } });
    const reply = await super.stream(request);
    request.onProviderNativeRawPayload?.({ provider: this.name, apiSurface: 'messages', payloadKind: 'response', payload: { id: 'msg_1' } });
    return reply;
  }
}

async function start(provider: ScriptedProvider, options: { threshold?: number; plugins?: NonNullable<Parameters<typeof testPreset>[0]>['plugins'] } = {}) {
  const kernel = await createKernel({
    plugins: testPreset({ provider, replace: [sessionLogger({ dir, externalPayloadThresholdBytes: options.threshold })], plugins: options.plugins }),
  });
  return kernel;
}

const events = async (sessionId: string) => (await readSessionLog(dir, sessionId)).value;

describe('sessionLogger plugin', () => {
  it('replaces the preset logger and writes every Session Logging event of a tool turn', async () => {
    const provider = new NativeReportingProvider({
      turns: [{ text: ['Let me ', 'echo.'], toolCalls: [{ name: 'echo', input: { text: 'hi' } }] }, { text: 'Echoed hi.', usage: { inputTokens: 10, outputTokens: 3 } }],
    });
    const kernel = await start(provider);
    expect(kernel.get(SessionLogger)).toBeInstanceOf(FileSessionLogger);
    const session = kernel.createSession({ sessionId: 'turn', tools: [echo], systemMessage: 'sys' });
    await session.run('please echo hi');
    await kernel.shutdown();

    const log = await events('turn');
    const names = new Set(log.map((entry) => entry.event));
    for (const name of [
      'session_init', 'pre_run', 'provider_request', 'provider_native_raw_payload', 'provider_stream_raw_delta', 'text_delta',
      'provider_response_raw', 'provider_response_normalized', 'tool_batch_started', 'tool_execution_request',
      'tool_execution_result', 'tool_message_committed', 'history_mutation', 'assistant', 'session_shutdown',
    ]) expect(names, name).toContain(name);

    const deltas = log.filter((entry) => entry.event === 'text_delta');
    expect(deltas.map((entry) => [entry.delta, entry.sequence, entry.round])).toEqual([['Let me ', 0, 1], ['echo.', 1, 1], ['Echoed hi.', 0, 2]]);
    const request = log.find((entry) => entry.event === 'tool_execution_request')!;
    expect(request).toMatchObject({ toolName: 'echo', toolCallId: 'toolu_0_0', parameters: { text: 'hi' }, batchIndex: 0, round: 1 });
    expect(log.find((entry) => entry.event === 'tool_execution_result')).toMatchObject({ toolCallId: 'toolu_0_0', success: true, output: 'hi' });
    const executionIds = new Set(log.filter((entry) => entry.executionId !== undefined).map((entry) => entry.executionId));
    expect(executionIds.size).toBe(1);
    expect(JSON.stringify(log)).not.toContain('sk-secret');

    expect(validateSessionReplayLogEntries(log, { dir })).toEqual({ ok: true, issues: [] });
    const replay = replaySessionLogEntries(log, { dir });
    expect(replay.messages).toEqual(session.getHistory());
    expect(replay.history).toEqual(session.getFullHistory());
  });

  it("a running turn's deltas reach the file before the turn ends", async () => {
    const kernel = await start(new ScriptedProvider({ turns: [] }));
    const manual = new ManualProvider();
    const session = kernel.createSession({ sessionId: 'live', provider: manual });
    const running = session.run('go');
    const call = await manual.waitForCall();
    call.delta('first-chunk');
    await vi.waitFor(async () => expect(await readFile(join(dir, 'live.jsonl'), 'utf8')).toContain('first-chunk'), { timeout: 2_000, interval: 5 });
    expect(session.isRunning()).toBe(true);
    call.finish();
    await running;
    await kernel.shutdown();
  });

  it('kernel shutdown flushes what is still buffered', async () => {
    const kernel = await start(new ScriptedProvider({ turns: [{ text: 'x' }] }));
    const session = kernel.createSession({ sessionId: 'flushed' });
    await session.run('hi');
    kernel.get(SessionLogger).log('flushed', 'late_event', { n: 1 });
    await kernel.shutdown();
    expect((await events('flushed')).map((entry) => entry.event)).toContain('late_event');
  });

  it('values over the inline threshold replay exactly', async () => {
    const large = 'L'.repeat(50_000);
    const bigTool: Tool = { ...echo, name: 'big', execute: async () => ({ success: true, output: large }) };
    const kernel = await start(new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'big', input: {} }] }, { text: 'done' }] }));
    const session = kernel.createSession({ sessionId: 'big', tools: [bigTool] });
    await session.run('go');
    await kernel.shutdown();
    const log = await events('big');
    expect(await readFile(join(dir, 'big.jsonl'), 'utf8')).not.toContain(large);
    const replay = replaySessionLogEntries(log, { dir });
    expect(replay.messages).toEqual(session.getHistory());
    expect(() => replaySessionLogEntries(log)).toThrow(/pass \{ dir \}/);

    // Tampering with a payload is caught by both replay and validation.
    const reference = log.find((entry) => entry.event === 'history_mutation' && typeof entry.entry === 'object' && (entry.entry as { kind?: string }).kind === 'external-payload')!.entry as { relativePath: string };
    await writeFile(join(dir, reference.relativePath), '"tampered"');
    expect(() => replaySessionLogEntries(log, { dir })).toThrow(/does not match/);
    expect(validateSessionReplayLogEntries(log, { dir }).issues.map((issue) => issue.code)).toContain('PAYLOAD_REFERENCE_INVALID');
  });

  it('logs a result for calls that never ran (denied) so requests and results pair up', async () => {
    const deny = definePlugin({
      name: 'deny-all',
      register: ({ hooks }) => hooks.preToolUse.tap({ name: 'deny', stage: Stage.Guard }, () => ({ decision: 'deny', reason: 'no' })),
    });
    const provider = new NativeReportingProvider({ turns: [{ toolCalls: [{ name: 'echo', input: { text: 'x' } }, { name: 'ghost', input: {} }] }, { text: 'ok' }] });
    const kernel = await start(provider, { plugins: [deny] });
    await kernel.createSession({ sessionId: 'denied', tools: [echo] }).run('go');
    await kernel.shutdown();
    const log = await events('denied');
    const results = log.filter((entry) => entry.event === 'tool_execution_result');
    expect(results.map((entry) => [entry.toolName, entry.success, entry.executed])).toEqual([['echo', false, false], ['ghost', false, false]]);
    expect(results[0]!.output).toContain('Permission denied');
    expect(validateSessionReplayLogEntries(log, { dir }).ok).toBe(true);
  });

  it('reads the stream: one subscriber per live session, and a never-run call gets its code from tool_end', async () => {
    const failing: Tool = { ...echo, name: 'fail', execute: async () => ({ success: false, output: 'boom', error: 'boom', errorCode: 'tool_error' }) };
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'ghost', input: {} }, { name: 'fail', input: {} }] }, { text: 'ok' }] });
    const kernel = await start(provider);
    const session = kernel.createSession({ sessionId: 'codes', tools: [failing] });
    // The logger listens through session.subscribe, attached at sessionStart.
    expect(session.subscribers).toBe(1);
    await session.run('go');
    await session.shutdown();
    expect(session.subscribers).toBe(0);
    await kernel.shutdown();
    const results = (await events('codes')).filter((entry) => entry.event === 'tool_execution_result');
    expect(results.map((entry) => [entry.toolName, entry.errorCode, entry.executed])).toEqual([
      ['fail', 'tool_error', undefined],
      ['ghost', 'unknown_tool', false],
    ]);
    expect(validateSessionReplayLogEntries(await events('codes')).issues.map((issue) => issue.code)).not.toContain('TOOL_REQUEST_MISSING');
  });

  it('records compaction as a history reset that replay follows', async () => {
    const compaction = definePlugin({ name: 'fake-compaction', provides: [Compaction], register: ({ bind }) => void bind(Compaction).toConstantValue({ compact: async () => ({ summary: 'short' }) }) });
    const kernel = await start(new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }] }), { plugins: [compaction] });
    const session = kernel.createSession({ sessionId: 'compacted' });
    await session.run('one');
    await session.compact();
    await session.run('two');
    await kernel.shutdown();
    const replay = replaySessionLogEntries(await events('compacted'), { dir });
    expect(replay.messages).toEqual(session.getHistory());
    expect(replay.messages[0]).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: '[Context Summary] short' }] });
  });

  it('records clearHistory as a reset, so replay matches the cleared session', async () => {
    const kernel = await start(new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }] }));
    const session = kernel.createSession({ sessionId: 'cleared' });
    await session.run('one');
    session.clearHistory();
    await session.run('two');
    await kernel.shutdown();
    const replay = replaySessionLogEntries(await events('cleared'), { dir });
    expect(replay.messages).toEqual(session.getHistory());
    expect(replay.messages[0]).toEqual({ role: 'user', content: 'two' });
  });

  it('validation reports missing native payloads, and exempts a failed provider call', async () => {
    const turns: ScriptedTurn[] = [{ text: 'no native payloads here' }, { error: 'overloaded' }];
    const kernel = await start(new ScriptedProvider({ turns }));
    const session = kernel.createSession({ sessionId: 'partial' });
    await session.run('one');
    await expect(session.run('two')).rejects.toThrow('overloaded');
    await kernel.shutdown();
    const log = await events('partial');
    expect(log.map((entry) => entry.event)).toContain('provider_error');
    const result = validateSessionReplayLogEntries(log);
    expect(result.ok).toBe(false);
    expect(result.issues.map((issue) => [issue.code, issue.round])).toEqual([['PROVIDER_NATIVE_RAW_PAYLOAD_MISSING', 1]]);
  });

  it('an aborted round still has its (interrupted) response logged', async () => {
    const kernel = await start(new ScriptedProvider({ turns: [] }));
    const manual = new ManualProvider();
    const session = kernel.createSession({ sessionId: 'aborted', provider: manual });
    const running = session.run('go').catch((error: unknown) => error);
    (await manual.waitForCall()).delta('part');
    session.abort();
    await running;
    await kernel.shutdown();
    const normalized = (await events('aborted')).find((entry) => entry.event === 'provider_response_normalized')!;
    expect(normalized).toMatchObject({ state: 'interrupted', round: 1 });
  });

  it('writes through a custom logger, so tests can record events', async () => {
    const recording = new RecordingSessionLogger();
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'hey' }], replace: [sessionLogger({ logger: recording })] }) });
    await kernel.createSession({ sessionId: 'rec' }).run('hi');
    await kernel.shutdown();
    expect(recording.named('provider_request')).toHaveLength(1);
    expect(recording.named('text_delta')[0]!.data).toMatchObject({ delta: 'hey', sequence: 0, round: 1 });
    expect(existsSync(join(dir, 'rec.jsonl'))).toBe(false);
  });
});

describe('sessionLogger plugin lifecycle', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('makes a plugin with no I/O: no directory until the first line is written', async () => {
    const logs = join(dir, 'logs');
    const plugin = sessionLogger({ dir: logs });
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'x' }], replace: [plugin] }) });
    expect(await readdir(dir)).toEqual([]);
    await kernel.createSession({ sessionId: 'first-use' }).run('hi');
    await kernel.shutdown();
    expect(await readdir(logs)).toEqual(['first-use.jsonl']);
  });

  it('the same plugin value composed into two kernels in a row: each has its own logger, both write, each shutdown flushes only its own', async () => {
    const flush = vi.spyOn(FileSessionLogger.prototype, 'flush');
    const plugins = testPreset({ turns: [{ text: 'one' }, { text: 'two' }], replace: [sessionLogger({ dir })] });
    const first = await createKernel({ plugins });
    const second = await createKernel({ plugins });
    const firstLogger = first.get(SessionLogger);
    const secondLogger = second.get(SessionLogger);
    expect(firstLogger).toBeInstanceOf(FileSessionLogger);
    expect(secondLogger).not.toBe(firstLogger);
    await first.createSession({ sessionId: 'k1' }).run('a');
    flush.mockClear();
    await first.shutdown();
    expect(flush.mock.contexts.length).toBeGreaterThan(0);
    expect(flush.mock.contexts.every((context) => context === firstLogger)).toBe(true);

    await second.createSession({ sessionId: 'k2' }).run('b');
    secondLogger.log('k2', 'late_event', { n: 2 });
    await second.shutdown();
    expect((await events('k1')).map((entry) => entry.event)).toContain('session_shutdown');
    expect((await events('k2')).map((entry) => entry.event)).toContain('late_event');
  });

  it('a given logger is bound as it is, in every kernel, and flushed at shutdown', async () => {
    const flush = vi.fn(async () => {});
    const recording = { log: vi.fn(), flush };
    const plugin = sessionLogger({ logger: recording });
    const first = await createKernel({ plugins: testPreset({ turns: [], replace: [plugin] }) });
    const second = await createKernel({ plugins: testPreset({ turns: [], replace: [plugin] }) });
    expect(first.get(SessionLogger)).toBe(recording);
    expect(second.get(SessionLogger)).toBe(recording);
    await first.shutdown();
    expect(flush).toHaveBeenCalled();
    await second.shutdown();
  });

  it("reports failed writes to the kernel's Diagnostics reporter", async () => {
    const notADirectory = join(dir, 'file');
    await writeFile(notADirectory, 'x');
    const reports: DiagnosticReport[] = [];
    const recorder = definePlugin({ name: 'recorder', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(report) }) });
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'x' }], replace: [sessionLogger({ dir: notADirectory })], plugins: [recorder] }) });
    await kernel.createSession({ sessionId: 'broken' }).run('hi');
    await kernel.shutdown();
    expect(reports.length).toBeGreaterThan(0);
    expect(reports[0]).toMatchObject({ severity: 'warning', code: 'TESSERA_LOGGER_ERROR', source: 'session-logger', file: join(notADirectory, 'broken.jsonl') });
    expect(reports[0]!.message).toMatch(/^Session log: write failed/);
    expect(kernel.describe().plugins.find((plugin) => plugin.name === 'session-logger')?.optional).toEqual(['Diagnostics']);
  });

  it('checks options when the plugin is made', () => {
    expect(() => sessionLogger({ flushDelayMs: 500 })).toThrow(/flushDelayMs/);
    expect(() => sessionLogger({ externalPayloadThresholdBytes: 0 })).toThrow(/externalPayloadThresholdBytes/);
    expect(() => sessionLogger({ logger: {} as never })).toThrow(/logger/);
  });

  it('kernel.container.rebind(SessionLogger) after createKernel reaches sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], replace: [sessionLogger({ dir })] }) });
    const early = new RecordingSessionLogger();
    // Not built yet: a plain rebind.
    kernel.container.rebind(SessionLogger).toConstantValue(early);
    await kernel.createSession({ sessionId: 'early' }).run('x');
    expect(early.named('provider_request')).toHaveLength(1);
    await kernel.shutdown();

    // Built and used: flushing it is asynchronous, so swap it with rebindAsync.
    const used = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], replace: [sessionLogger({ dir })] }) });
    const before = used.createSession({ sessionId: 'before' });
    await before.run('x');
    const replacement = new RecordingSessionLogger();
    (await used.container.rebindAsync(SessionLogger)).toConstantValue(replacement);
    await used.createSession({ sessionId: 'after' }).run('y');
    expect(replacement.named('provider_request')).toHaveLength(1);
    expect(existsSync(join(dir, 'after.jsonl'))).toBe(false);
    expect((await events('before')).map((entry) => entry.event)).toContain('provider_request');
    await used.shutdown();
  });
});

describe('log readers', () => {
  it('readSessionLog reports a torn last line instead of failing', async () => {
    await writeFile(join(dir, 's.jsonl'), '{"event":"a","sessionId":"s"}\n{"event":"b","sess');
    const { value, diagnostics } = await readSessionLog(dir, 's');
    expect(value.map((entry) => entry.event)).toEqual(['a']);
    expect(diagnostics).toMatchObject([{ line: 2, severity: 'error' }]);
    await expect(readSessionLog(dir, '../etc')).rejects.toThrow(/Invalid session id/);
  });

  it('validation pairs tool requests with results and checks reference shapes', () => {
    const result = validateSessionReplayLogEntries([
      { event: 'tool_execution_request', toolCallId: 'a', executionId: 'e', round: 1 },
      { event: 'tool_execution_result', toolCallId: 'b', executionId: 'e', round: 1 },
      { event: 'x', sessionId: 's', field: { kind: 'external-payload', encoding: 'json', sha256: 'nothex', byteLength: 1, relativePath: 'x' } },
      { event: 'y', sessionId: 's', field: { kind: 'external-payload', encoding: 'json', sha256: 'a'.repeat(64), byteLength: 1, relativePath: '../../etc/passwd' } },
    ]);
    expect(result.issues.map((issue) => [issue.code, issue.eventIndex, issue.toolCallId])).toEqual([
      ['TOOL_RESULT_MISSING', 0, 'a'],
      ['TOOL_REQUEST_MISSING', 1, 'b'],
      ['PAYLOAD_REFERENCE_INVALID', 2, undefined],
      ['PAYLOAD_REFERENCE_INVALID', 3, undefined],
    ]);
  });
});
