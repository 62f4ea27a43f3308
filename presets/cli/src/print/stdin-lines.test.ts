import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StdinLines } from './stdin-lines.js';

async function all(lines: StdinLines): Promise<Array<{ value: unknown; line: number }>> {
  const out: Array<{ value: unknown; line: number }> = [];
  for (;;) {
    const next = await lines.next();
    if (next === undefined) return out;
    out.push({ value: next.value, line: next.line });
  }
}

describe('StdinLines', () => {
  it('splits objects across chunk boundaries and multi-byte characters, counts lines, skips blanks', async () => {
    const stream = new PassThrough();
    const lines = new StdinLines(stream);
    const text = Buffer.from('{"a":1}\n\n{"b":"é€"}\nnot json\n{"c":3}');
    for (let index = 0; index < text.length; index += 3) stream.write(text.subarray(index, index + 3));
    stream.end();
    expect(await all(lines)).toEqual([
      { value: { a: 1 }, line: 1 },
      { value: { b: 'é€' }, line: 3 },
      { value: undefined, line: 4 },
      { value: { c: 3 }, line: 5 },
    ]);
  });

  it('reports a line longer than the cap once and goes on with the next line', async () => {
    const stream = new PassThrough();
    const lines = new StdinLines(stream);
    const chunk = 'x'.repeat(8 * 1024 * 1024);
    // 72 MiB without a newline, written in pieces, then a good line.
    for (let index = 0; index < 9; index += 1) stream.write(chunk);
    stream.write('\n{"ok":true}\n');
    stream.end();
    const seen = await all(lines);
    expect(seen).toEqual([
      { value: undefined, line: 1 },
      { value: { ok: true }, line: 2 },
    ]);
  });
});
