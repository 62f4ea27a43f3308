import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionLogData } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSessionLogger } from './file-session-logger.js';
import { LineBuffer } from './line-buffer.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-delta-lines-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
const iso = (ms: number): string => new Date(ms).toISOString();
/** What the general path (and any JSON writer) produces for one record. */
const expected = (ms: number, event: string, data: Record<string, unknown>): string => `${JSON.stringify({ timestamp: iso(ms), sessionId: 's', event, ...data })}\n`;

/** Logs each chunk the way the taps do: one data object, two events. */
async function logChunks(logger: FileSessionLogger, records: SessionLogData[]): Promise<string> {
  for (const data of records) {
    logger.log('s', 'provider_stream_raw_delta', data);
    logger.log('s', 'text_delta', data);
  }
  await logger.flush();
  return readFile(logger.getLogPath('s'), 'utf8');
}

describe('streamed-chunk fast path', () => {
  it('writes byte-for-byte what JSON.stringify writes, escapes and numbers included', async () => {
    const logger = new FileSessionLogger({ dir, now: () => T0 });
    const deltas = ['plain text ', '', 'say "hi"', 'back\\slash', 'line\nbreak\ttab\r', '\u0000\u001f', 'del\u007f', 'café ünïcode', 'emoji 🎉', 'lone \ud800 surrogate', 'lone \udfff too', '</script>'];
    const sequences = [0, 9, 10, 12_345, 2 ** 31, 2 ** 53, 1.5, -1, -0, 1e21, 5e-7];
    const records = [
      ...deltas.map((delta, index) => ({ sequence: index, delta, round: 1, executionId: 'exec-1' })),
      ...sequences.map((sequence) => ({ sequence, delta: 'x', round: 2, executionId: 'exec "2"' })),
      { sequence: 3, delta: 'y', round: 0.25, executionId: 'é' },
    ];
    const written = await logChunks(logger, records);
    expect(written).toBe(records.map((data) => expected(T0, 'provider_stream_raw_delta', data) + expected(T0, 'text_delta', data)).join(''));
  });

  it('sends anything but the taps\' exact shape through the general path, redaction included', async () => {
    const logger = new FileSessionLogger({ dir, now: () => T0 });
    class Delta {
      constructor(
        readonly sequence: number,
        readonly delta: string,
        readonly round: number,
        readonly executionId: string,
      ) {}
    }
    const inherited = Object.create({ sequence: 1, delta: 'inherited', round: 1, executionId: 'e' }) as SessionLogData;
    const records: SessionLogData[] = [
      { sequence: 1, delta: 'a', round: 1, executionId: 'e', apiKey: 'sk-secret' },
      { delta: 'b', sequence: 2, round: 1, executionId: 'e' },
      { sequence: 3, delta: 'c', round: 1 },
      { sequence: Number.NaN, delta: 'd', round: 1, executionId: 'e' },
      { sequence: 5, delta: 6, round: 1, executionId: 'e' },
      new Delta(6, 'class instance', 1, 'e') as unknown as SessionLogData,
      inherited,
    ];
    const lines = (await logChunks(logger, records)).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const general = (data: SessionLogData): Record<string, unknown> => JSON.parse(JSON.stringify({ timestamp: iso(T0), sessionId: 's', ...data, apiKey: data.apiKey === undefined ? undefined : '[REDACTED]' })) as Record<string, unknown>;
    expect(lines.map(({ event: _event, ...rest }) => rest)).toEqual(records.flatMap((data) => [general(data), general(data)]));
    expect(lines.filter((_, index) => index % 2 === 1).every((line) => line.event === 'text_delta')).toBe(true);
  });

  it('notices a data object changed between its two events', async () => {
    const logger = new FileSessionLogger({ dir, now: () => T0 });
    const data: SessionLogData = { sequence: 1, delta: 'first', round: 1, executionId: 'e' };
    logger.log('s', 'provider_stream_raw_delta', data);
    data.delta = 'second';
    logger.log('s', 'text_delta', data);
    data.extra = 'kept';
    logger.log('s', 'text_delta', data);
    await logger.flush();
    expect(await readFile(logger.getLogPath('s'), 'utf8')).toBe(
      expected(T0, 'provider_stream_raw_delta', { sequence: 1, delta: 'first', round: 1, executionId: 'e' }) +
        expected(T0, 'text_delta', { sequence: 1, delta: 'second', round: 1, executionId: 'e' }) +
        expected(T0, 'text_delta', { sequence: 1, delta: 'second', round: 1, executionId: 'e', extra: 'kept' }),
    );
  });

  it('reads the clock once per chunk: the second line of a chunk shares the first one\'s timestamp', async () => {
    let clock = T0;
    const logger = new FileSessionLogger({ dir, now: () => (clock += 1) });
    const data = { sequence: 0, delta: 'a', round: 1, executionId: 'e' };
    logger.log('s', 'provider_stream_raw_delta', data);
    logger.log('s', 'text_delta', data);
    // Only the line right after the first one shares its reading: a third identical event,
    // or one after another line, reads the clock again.
    logger.log('s', 'provider_stream_raw_delta', data);
    logger.log('s', 'other', {});
    logger.log('s', 'text_delta', data);
    logger.log('s', 'text_delta', data);
    await logger.flush();
    const stamps = (await readFile(logger.getLogPath('s'), 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { timestamp: string }).timestamp);
    expect(stamps).toEqual([iso(T0 + 1), iso(T0 + 1), iso(T0 + 2), iso(T0 + 3), iso(T0 + 4), iso(T0 + 5)]);
  });

  it('leaves deltas too long to inline to the general path, which stores them as payloads', async () => {
    const logger = new FileSessionLogger({ dir, now: () => T0, externalPayloadThresholdBytes: 1_024 });
    const lines = (await logChunks(logger, [{ sequence: 0, delta: 'z'.repeat(2_000), round: 1, executionId: 'e' }])).trim().split('\n');
    for (const line of lines) expect((JSON.parse(line) as { delta: { kind: string } }).delta.kind).toBe('external-payload');
  });

  it('keeps every line intact across chunk boundaries', async () => {
    const logger = new FileSessionLogger({ dir, now: () => T0 });
    // Sizes that do not divide 64 KiB, so pairs straddle chunk ends at varying points.
    const records = Array.from({ length: 600 }, (_, index) => ({ sequence: index, delta: `${'ab"c'.repeat(index % 97)}é${index}`, round: 1, executionId: 'e' }));
    const written = await logChunks(logger, records);
    expect(written.length).toBeGreaterThan(3 * 64 * 1024);
    expect(written).toBe(records.map((data) => expected(T0, 'provider_stream_raw_delta', data) + expected(T0, 'text_delta', data)).join(''));
  });
});

describe('repeated large fields', () => {
  it('reuses the reference only for an identical field, and still writes every payload', async () => {
    const logger = new FileSessionLogger({ dir, now: () => T0, externalPayloadThresholdBytes: 1_024 });
    const first = { text: 'a'.repeat(2_000) };
    const second = { text: 'b'.repeat(2_000) };
    logger.log('s', 'raw', { response: first });
    logger.log('s', 'normalized', { message: first });
    logger.log('s', 'next', { message: second });
    await logger.flush();
    logger.log('s', 'after-flush', { message: first });
    await logger.flush();
    const lines = (await readFile(logger.getLogPath('s'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, { sha256: string }>);
    const hashes = [lines[0]!.response!.sha256, lines[1]!.message!.sha256, lines[2]!.message!.sha256, lines[3]!.message!.sha256];
    expect(hashes[0]).toBe(hashes[1]);
    expect(hashes[2]).not.toBe(hashes[0]);
    expect(hashes[3]).toBe(hashes[0]);
    for (const [hash, value] of [[hashes[0], first], [hashes[2], second]] as const) {
      expect(JSON.parse(await readFile(join(dir, 's.payloads', `${hash}.json`), 'utf8'))).toEqual(value);
    }
  });
});

describe('LineBuffer', () => {
  const text = (taken: { chunks: Buffer[] }): string => Buffer.concat(taken.chunks).toString('utf8');

  it('hands out lines in order, keeps writing after a take, and puts failed lines back in front', () => {
    const buffer = new LineBuffer();
    buffer.append('one\n');
    buffer.append('twö\n');
    expect(buffer.bytes).toBe(9);
    const first = buffer.take();
    expect([text(first), first.lines, first.bytes, buffer.lines, buffer.bytes]).toEqual(['one\ntwö\n', 2, 9, 0, 0]);
    buffer.append('three\n');
    buffer.restore(first);
    const all = buffer.take();
    expect([text(all), all.lines, all.bytes]).toEqual(['one\ntwö\nthree\n', 3, 15]);
    // The first batch's bytes were not overwritten by later lines.
    expect(text(first)).toBe('one\ntwö\n');
  });

  it('takes lines longer than a chunk and drops the oldest chunks beyond a limit', () => {
    const buffer = new LineBuffer();
    const long = `${'x'.repeat(200_000)}\n`;
    buffer.append('a\n');
    buffer.append(long);
    buffer.append('b\n');
    expect(text(buffer.take())).toBe(`a\n${long}b\n`);
    buffer.append('old\n');
    buffer.take();
    buffer.append(long);
    buffer.append('new\n');
    expect(buffer.dropOldest(10)).toBeGreaterThan(0);
    expect(buffer.bytes).toBeLessThanOrEqual(10);
  });
});
