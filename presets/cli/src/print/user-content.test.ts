import { describe, expect, it } from 'vitest';
import { readUserContent } from './user-content.js';

const PNG = 'iVBORw0KGgo=';
const image = (source: unknown) => ({ type: 'image', source });

describe('readUserContent', () => {
  it('takes a string, text blocks, and base64 images in order; names other block kinds', () => {
    expect(readUserContent({ content: 'hi' }, 1)).toEqual({ text: 'hi', skipped: [] });
    expect(readUserContent({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, 1)).toEqual({ text: 'a\nb', skipped: [] });
    expect(readUserContent({ content: [image({ type: 'base64', media_type: 'image/webp', data: `${PNG}\n` }), { type: 'text', text: 'what?' }, { type: 'document' }] }, 1)).toEqual({
      text: 'what?',
      blocks: [{ type: 'image', data: PNG, mediaType: 'image/webp' }, { type: 'text', text: 'what?' }],
      skipped: ['document'],
    });
  });

  it('refuses what cannot be sent, naming the line and the field', () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'stdin line 7: a user message needs message.content'],
      [{ content: [image({ type: 'url', url: 'https://example.com/a.png' })] }, 'stdin line 7: message.content[0].source.type is "url"'],
      [{ content: [image({ type: 'file', file_id: 'f' })] }, 'stdin line 7: message.content[0].source.type must be "base64"; got "file"'],
      [{ content: [{ type: 'text', text: 'x' }, image({ type: 'base64', data: PNG })] }, 'stdin line 7: message.content[1].source.media_type must be one of'],
      [{ content: [image({ type: 'base64', media_type: 'image/png', data: '' })] }, 'stdin line 7: message.content[0].source.data must be'],
      [{ content: [image({ type: 'base64', media_type: 'image/png', data: 'not base64!' })] }, 'stdin line 7: message.content[0].source.data is not base64'],
      [{ content: [image(undefined)] }, 'stdin line 7: message.content[0].source must be an object'],
    ];
    for (const [message, expected] of cases) {
      const read = readUserContent(message, 7);
      expect(read, JSON.stringify(message)).toEqual({ error: expect.stringContaining(expected) });
    }
  });

  it('refuses a message with nothing to send, naming the line and the field, so the host still gets its result', () => {
    const cases: Array<[unknown, string]> = [
      ['', 'stdin line 4: message.content is an empty string, so there is no prompt; the message was not sent.'],
      [[], 'stdin line 4: message.content is an empty array, so there is no prompt; the message was not sent.'],
      [' \n', 'stdin line 4: message.content is only whitespace'],
      [[{ type: 'text', text: '' }], 'stdin line 4: message.content has no text or image (its text blocks are empty)'],
      [[{ type: 'document' }], 'stdin line 4: message.content has no text or image (only document blocks, which are not supported yet)'],
    ];
    for (const [content, expected] of cases) expect(readUserContent({ content }, 4), JSON.stringify(content)).toEqual({ error: expect.stringContaining(expected) });
    // An image alone is something to send.
    expect(readUserContent({ content: [image({ type: 'base64', media_type: 'image/png', data: PNG })] }, 4)).toMatchObject({ text: '', skipped: [] });
  });
});
