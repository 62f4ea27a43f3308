import { evaluatePermission } from '@tessera/permission-rules';
import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME_LENGTH, assignServerPrefixes, assignToolNames, mcpToolName, sanitizeSegment, serverPrefix } from './tool-names.js';

describe('tool names', () => {
  it('names tools mcp__<server>__<tool> and plugin servers mcp__plugin_<plugin>_<server>__<tool>', () => {
    expect(mcpToolName(serverPrefix('github'), 'create_issue')).toBe('mcp__github__create_issue');
    expect(mcpToolName(serverPrefix('db', 'acme-tools'), 'query')).toBe('mcp__plugin_acme-tools_db__query');
  });

  it('replaces characters outside [A-Za-z0-9_-] and keeps the __ separator unambiguous', () => {
    expect(sanitizeSegment('my server.v2')).toBe('my_server_v2');
    expect(sanitizeSegment('a__b')).toBe('a_b');
    expect(sanitizeSegment('日本')).toBe('server');
    expect(sanitizeSegment('_internal_')).toBe('internal');
    expect(mcpToolName('mcp__s', 'read.file/now')).toBe('mcp__s__read_file_now');
  });

  it('caps names at 64 characters with a stable hash suffix', () => {
    const long = 'x'.repeat(100);
    const name = mcpToolName('mcp__server', long);
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(name).toMatch(/^mcp__server__x+_[0-9a-f]{8}$/);
    expect(mcpToolName('mcp__server', long)).toBe(name);
    expect(mcpToolName('mcp__server', `${long}y`)).not.toBe(name);
  });

  it('resolves collisions deterministically, whatever order the server lists its tools in', () => {
    const forward = assignToolNames('mcp__s', ['a.b', 'a_b', 'a b']);
    const backward = assignToolNames('mcp__s', ['a b', 'a_b', 'a.b']);
    expect(forward).toEqual(backward);
    expect(new Set(forward.values()).size).toBe(3);
    expect(forward.get('a b')).toBe('mcp__s__a_b');
    for (const name of forward.values()) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('keeps colliding truncated names distinct and within the cap', () => {
    const base = 'y'.repeat(80);
    const names = assignToolNames('mcp__s', [`${base}.1`, `${base}_1`], new Set());
    expect(new Set(names.values()).size).toBe(2);
    for (const name of names.values()) expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME_LENGTH);
  });

  it('gives servers whose names sanitise alike distinct prefixes', () => {
    const prefixes = assignServerPrefixes([{ name: 'my_server' }, { name: 'my.server' }]);
    expect(prefixes.get('my.server')).toBe('mcp__my_server');
    expect(prefixes.get('my_server')).toMatch(/^mcp__my_server-[0-9a-f]{6}$/);
    expect(assignServerPrefixes([{ name: 'my.server' }, { name: 'my_server' }])).toEqual(prefixes);
  });
});

describe('names and the permission rules', () => {
  it('match mcp__<server>, mcp__<server>__* and mcp__<server>__<tool> for every shape the pool produces', () => {
    const cases: Array<[string, string]> = [
      ['github', 'create_issue'],
      ['my.server', 'read.file'],
      ['__odd__name__', 'x'],
      ['-dash-', 'y'],
    ];
    for (const [server, tool] of cases) {
      const prefix = serverPrefix(server);
      const name = mcpToolName(prefix, tool);
      expect(evaluatePermission(name, {}, 'default', { allow: [prefix] })).toBe('auto');
      expect(evaluatePermission(name, {}, 'default', { allow: [`${prefix}__*`] })).toBe('auto');
      expect(evaluatePermission(name, {}, 'default', { allow: [name] })).toBe('auto');
      expect(evaluatePermission(name, {}, 'default', { allow: [`${prefix}x`] })).toBe('approve');
    }
    const plugin = mcpToolName(serverPrefix('db', 'acme'), 'query');
    expect(evaluatePermission(plugin, {}, 'default', { allow: ['mcp__plugin_acme_db'] })).toBe('auto');
    expect(evaluatePermission(plugin, {}, 'default', { allow: ['mcp__plugin_acme_db__*'] })).toBe('auto');
  });
});
