import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileSessionLogger, InvalidSessionIdError, SessionLogWriteError, SilentSessionLogger, replaySessionLogEntries } from './index.js';
import { readSessionLog } from './session-log-replay.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-logger-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = async (file: string): Promise<Array<Record<string, unknown>>> =>
  (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

describe('FileSessionLogger', () => {
  it('appends {timestamp, sessionId, event, ...data} lines with secrets redacted', async () => {
    const logger = new FileSessionLogger({ dir, now: () => Date.UTC(2026, 0, 2) });
    logger.log('s1', 'session_init', { provider: 'x', config: { apiKey: 'sk-live', nested: { Authorization: 'Bearer t' } }, skipped: undefined });
    logger.log('s1', 'pre_run', { input: 'hi', event: 'shadow' });
    logger.log('s1', 'flat', { apiKey: 'sk-top', Password: 'p', n: 1, missing: null });
    await logger.flush();
    const written = await lines(logger.getLogPath('s1'));
    expect(written).toEqual([
      { timestamp: '2026-01-02T00:00:00.000Z', sessionId: 's1', event: 'session_init', provider: 'x', config: { apiKey: '[REDACTED]', nested: { Authorization: '[REDACTED]' } } },
      { timestamp: '2026-01-02T00:00:00.000Z', sessionId: 's1', event: 'pre_run', input: 'hi' },
      { timestamp: '2026-01-02T00:00:00.000Z', sessionId: 's1', event: 'flat', apiKey: '[REDACTED]', Password: '[REDACTED]', n: 1, missing: null },
    ]);
    expect(await readFile(logger.getLogPath('s1'), 'utf8')).not.toMatch(/sk-live|sk-top/);
  });

  it('buffers: logging writes nothing synchronously, the timer writes without an explicit flush', async () => {
    const logger = new FileSessionLogger({ dir, flushDelayMs: 5 });
    for (let index = 0; index < 1_000; index++) logger.log('s', 'text_delta', { delta: `d${index}` });
    expect(existsSync(logger.getLogPath('s'))).toBe(false);
    await vi.waitFor(async () => expect(await lines(logger.getLogPath('s'))).toHaveLength(1_000));
    expect((await lines(logger.getLogPath('s'))).map((line) => line.delta)).toEqual(Array.from({ length: 1_000 }, (_, index) => `d${index}`));
  });

  it('stores fields over the threshold as content-addressed payloads that replay round-trips', async () => {
    const logger = new FileSessionLogger({ dir, externalPayloadThresholdBytes: 1_024 });
    const big = { role: 'tool', text: 'é'.repeat(2_000), password: 'hunter2' };
    const entry = { id: 'e1', timestamp: 't', category: 'chat', type: 'tool', data: big };
    logger.log('s', 'history_mutation', { mutation: 'append_message', entry });
    logger.log('s', 'history_mutation', { mutation: 'append_message', entry });
    logger.log('s', 'small', { value: 'x'.repeat(100) });
    await logger.flush();
    const [first, second, small] = await lines(logger.getLogPath('s'));
    const reference = first!.entry as Record<string, unknown>;
    const json = JSON.stringify({ ...entry, data: { ...big, password: '[REDACTED]' } });
    const sha256 = createHash('sha256').update(json).digest('hex');
    expect(reference).toEqual({ kind: 'external-payload', encoding: 'json', sha256, byteLength: Buffer.byteLength(json), relativePath: `s.payloads/${sha256}.json` });
    expect(second!.entry).toEqual(reference);
    expect(small!.value).toBe('x'.repeat(100));
    expect(await readdir(join(dir, 's.payloads'))).toEqual([`${sha256}.json`]);
    expect(await readFile(join(dir, 's.payloads', `${sha256}.json`), 'utf8')).toBe(json);

    const { value: entries } = await readSessionLog(dir, 's');
    const replayed = replaySessionLogEntries(entries.slice(0, 1), { dir });
    expect(replayed.history).toEqual([{ ...entry, data: { ...big, password: '[REDACTED]' } }]);
  });

  it('validates session ids before they form a path', async () => {
    const logger = new FileSessionLogger({ dir: join(dir, 'logs') });
    for (const id of ['../x', 'a/b', '', '..', '.hidden', '/abs']) {
      expect(() => logger.log(id, 'e', {})).toThrow(InvalidSessionIdError);
    }
    await logger.flush();
    expect(await readdir(dir)).toEqual([]);
  });

  it('reports write failures once, keeps the lines, and writes them when the disk recovers', async () => {
    const blocked = join(dir, 'logs');
    await writeFile(blocked, 'a file where the directory should be');
    const errors: SessionLogWriteError[] = [];
    const logger = new FileSessionLogger({ dir: blocked, onError: (error) => errors.push(error) });
    logger.log('s', 'one', {});
    await logger.flush();
    logger.log('s', 'two', {});
    await logger.flush();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SessionLogWriteError);
    expect(errors[0]!.message).toMatch(/logs[/\\]s\.jsonl: write failed/);
    expect(errors[0]!.message).toContain('line(s) kept in memory');
    await rm(blocked);
    await logger.flush();
    expect((await lines(join(blocked, 's.jsonl'))).map((line) => line.event)).toEqual(['one', 'two']);
  });

  it('defaults to a TESSERA_LOGGER_ERROR warning for failures', async () => {
    const blocked = join(dir, 'file');
    await writeFile(blocked, '');
    const warnings: Array<{ code?: string }> = [];
    const listener = (warning: Error & { code?: string }): void => void warnings.push(warning);
    process.on('warning', listener);
    try {
      const logger = new FileSessionLogger({ dir: blocked });
      logger.log('s', 'e', {});
      await logger.flush();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    expect(warnings.map((warning) => warning.code)).toContain('TESSERA_LOGGER_ERROR');
  });

  it('rejects options that would break the 100 ms promise', () => {
    expect(() => new FileSessionLogger({ dir, flushDelayMs: 500 })).toThrow(/flushDelayMs/);
    expect(() => new FileSessionLogger({ dir, externalPayloadThresholdBytes: 0 })).toThrow(/externalPayloadThresholdBytes/);
    expect(new FileSessionLogger({ dir }).flushDelayMs).toBeLessThanOrEqual(100);
  });

  it('SilentSessionLogger discards everything', async () => {
    const silent = new SilentSessionLogger();
    silent.log();
    await expect(silent.flush()).resolves.toBeUndefined();
  });
});
