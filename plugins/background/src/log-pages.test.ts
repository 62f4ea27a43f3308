import { describe, expect, it } from 'vitest';
import {
  appendPrefixedLogLines,
  BackgroundTaskLogBuffer,
  createBackgroundTaskLogPage,
  createLimitedOutputCapture,
} from './log-pages.js';

describe('createLimitedOutputCapture', () => {
  it('keeps everything under the limit', () => {
    const capture = createLimitedOutputCapture(10);
    capture.append('abc');
    capture.append(Buffer.from('def'));
    expect(capture.toString()).toBe('abcdef');
    expect(capture.truncated).toBe(false);
    expect(capture.byteLength).toBe(6);
  });

  it('never cuts a multi-byte character in half', () => {
    const capture = createLimitedOutputCapture(5);
    capture.append('ab€cd'); // € is 3 bytes: a b [e2 82 ac] → limit falls inside it
    expect(capture.toString()).toBe('ab€');
    const tight = createLimitedOutputCapture(4);
    tight.append('ab€');
    expect(tight.toString()).toBe('ab');
    expect(tight.truncated).toBe(true);
    expect(tight.droppedBytes).toBe(1);
  });

  it('handles a character split across chunks and a 4-byte emoji at the cut', () => {
    const bytes = Buffer.from('x😀y');
    const capture = createLimitedOutputCapture(3);
    capture.append(bytes.subarray(0, 2));
    capture.append(bytes.subarray(2));
    expect(capture.toString()).toBe('x');
    const whole = createLimitedOutputCapture(5);
    whole.append(bytes.subarray(0, 2));
    whole.append(bytes.subarray(2));
    expect(whole.toString()).toBe('x😀');
  });

  it('drops everything after the limit and rejects a bad limit', () => {
    const capture = createLimitedOutputCapture(2);
    capture.append('abc');
    capture.append('def');
    expect(capture.toString()).toBe('ab');
    expect(capture.droppedBytes).toBe(4);
    expect(() => createLimitedOutputCapture(-1)).toThrow(RangeError);
  });
});

describe('appendPrefixedLogLines', () => {
  it('prefixes non-empty lines and strips CR', () => {
    const lines: string[] = [];
    expect(appendPrefixedLogLines(lines, 'stdout', 'one\r\n\n  \ntwo\n')).toBe(2);
    expect(lines).toEqual(['[stdout] one', '[stdout] two']);
  });
});

describe('createBackgroundTaskLogPage', () => {
  const lines = Array.from({ length: 5 }, (_, i) => `l${i}`);

  it('pages with absolute cursors', () => {
    const first = createBackgroundTaskLogPage(lines, undefined, { limit: 2 });
    expect(first).toMatchObject({ lines: ['l0', 'l1'], nextCursor: { offset: 2 }, hasMore: true, totalLines: 5 });
    const last = createBackgroundTaskLogPage(lines, { offset: 4 }, { limit: 2 });
    expect(last).toMatchObject({ lines: ['l4'], nextCursor: { offset: 5 }, hasMore: false });
    const beyond = createBackgroundTaskLogPage(lines, { offset: 99 });
    expect(beyond).toMatchObject({ lines: [], cursor: { offset: 5 }, nextCursor: { offset: 5 } });
  });

  it('reports lines dropped before the cursor', () => {
    const page = createBackgroundTaskLogPage(['l3', 'l4'], { offset: 1 }, { firstOffset: 3 });
    expect(page).toMatchObject({ lines: ['l3', 'l4'], cursor: { offset: 3 }, truncated: true, totalLines: 5 });
  });

  it('rejects negative or fractional cursors', () => {
    expect(() => createBackgroundTaskLogPage(lines, { offset: -1 })).toThrow(RangeError);
    expect(() => createBackgroundTaskLogPage(lines, { offset: 1.5 })).toThrow(RangeError);
  });
});

describe('BackgroundTaskLogBuffer', () => {
  it('keeps cursors valid after dropping old lines', () => {
    const log = new BackgroundTaskLogBuffer(10);
    for (let i = 0; i < 25; i++) log.append('out', `line ${i}\n`);
    expect(log.totalLines).toBe(25);
    const page = log.page({ offset: 20 }, 3);
    expect(page.lines).toEqual(['[out] line 20', '[out] line 21', '[out] line 22']);
    expect(log.page({ offset: 0 }).truncated).toBe(true);
  });
});
