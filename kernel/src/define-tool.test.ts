import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, toolsPlugin } from './define-tool.js';

const read = defineTool({
  name: 'Read',
  description: 'Reads a file',
  inputSchema: z.object({ file_path: z.string(), offset: z.number().int().optional(), limit: z.number().int().optional() }),
  execute: ({ file_path }) => ({ success: true, output: file_path }),
});

describe('defineTool', () => {
  it('derives the JSON Schema from zod, without $schema', () => {
    expect(read.parameters).toEqual({
      type: 'object',
      properties: { file_path: { type: 'string' }, offset: { type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) }, limit: expect.objectContaining({ type: 'integer' }) },
      required: ['file_path'],
      additionalProperties: false,
    });
    expect(read.parameters).toBe(read.parameters);
  });

  it('validates input and names the failing field', () => {
    expect(read.validate!({ file_path: '/a' })).toEqual({ success: true, data: { file_path: '/a' } });
    const bad = read.validate!({ file_path: 1, offset: 'x' });
    expect(bad.success).toBe(false);
    expect(bad.success === false && bad.message).toMatch(/file_path: .*; offset: /);
  });

  it('rejects names providers would refuse', () => {
    expect(() => defineTool({ ...{ name: 'has space', description: '', inputSchema: z.object({}), execute: () => ({ success: true, output: '' }) } })).toThrow(/invalid/);
  });

  it('toolsPlugin contributes the tools under a derived or given name', () => {
    expect(toolsPlugin(read).name).toBe('tools:Read');
    expect(toolsPlugin({ name: 'file-tools' }, read).name).toBe('file-tools');
  });
});
