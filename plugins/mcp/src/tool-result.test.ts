import { describe, expect, it } from 'vitest';
import { toToolResult } from './tool-result.js';

describe('MCP results as tool results', () => {
  it('joins text blocks', () => {
    expect(toToolResult({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, 's', 't')).toMatchObject({ success: true, output: 'a\nb' });
  });

  it('keeps images as image blocks', () => {
    const result = toToolResult({ content: [{ type: 'text', text: 'see' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }, 's', 't');
    expect(result.output).toEqual([{ type: 'text', text: 'see' }, { type: 'image', data: 'AAAA', mediaType: 'image/png' }]);
  });

  it('inlines embedded text resources and describes links and blobs', () => {
    const result = toToolResult({
      content: [
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'body' } },
        { type: 'resource_link', uri: 'file:///b.txt', name: 'b', mimeType: 'text/plain' },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
      ],
    }, 's', 't');
    expect(result.output).toBe('[resource file:///a.txt]\nbody\n[resource link file:///b.txt — b, text/plain]\n[resource file:///c.bin: application/octet-stream, 4 base64 characters, not shown]');
    expect(result.data?.resources).toEqual(['file:///a.txt', 'file:///b.txt', 'file:///c.bin']);
  });

  it('sends structuredContent as JSON only when there is no text', () => {
    expect(toToolResult({ content: [], structuredContent: { a: 1 } }, 's', 't')).toMatchObject({ output: '{\n  "a": 1\n}', data: { structuredContent: { a: 1 } } });
    expect(toToolResult({ content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 } }, 's', 't').output).toBe('x');
  });

  it('makes isError a failed result', () => {
    expect(toToolResult({ isError: true, content: [{ type: 'text', text: 'boom' }] }, 's', 't')).toMatchObject({ success: false, error: 'boom', errorCode: 'tool_error' });
    expect(toToolResult({ isError: true }, 'srv', 'tl').error).toBe('MCP tool "tl" on server "srv" reported an error without a message.');
  });

  it('never throws on malformed results', () => {
    for (const raw of [null, 'text', 42, { content: 'nope' }, { content: [null, 1, { type: 'image' }, { type: 'x' }] }]) {
      expect(() => toToolResult(raw, 's', 't')).not.toThrow();
    }
    expect(toToolResult({}, 's', 't').output).toBe('(no output)');
  });
});
