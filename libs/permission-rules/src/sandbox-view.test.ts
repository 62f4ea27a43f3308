import { describe, expect, it } from 'vitest';
import { hostCommand, hostInput, hostPathFor } from './sandbox-view.js';

describe('sandbox paths judged as host paths', () => {
  it.each([
    ['/workspace', '/proj'],
    ['/workspace/secrets/key.txt', '/proj/secrets/key.txt'],
    ['/workspace/src/../secrets/k', '/proj/secrets/k'],
    ['/workspace/../etc/passwd', undefined],
    ['/workspace2/x', undefined],
    ['/etc/passwd', undefined],
    ['relative/x', undefined],
  ])('%s → %s', (path, expected) => {
    expect(hostPathFor(path, '/workspace', '/proj')).toBe(expected);
    expect(hostPathFor(path, '/workspace/', '/proj')).toBe(expected);
  });

  it('moves the path fields of an input and leaves an input without them alone', () => {
    expect(hostInput({ file_path: '/workspace/a.ts', content: 'x' }, '/workspace', '/proj')).toEqual({ file_path: '/proj/a.ts', content: 'x' });
    expect(hostInput({ pattern: 'x', path: '/workspace/src' }, '/workspace', '/proj')).toEqual({ pattern: 'x', path: '/proj/src' });
    const untouched = { file_path: '/tmp/a' };
    expect(hostInput(untouched, '/workspace', '/proj')).toBe(untouched);
  });

  it('rewrites the root where it starts a path in a command, and nowhere else', () => {
    expect(hostCommand('cat /workspace/secrets/k', '/workspace', '/proj')).toBe('cat /proj/secrets/k');
    expect(hostCommand('cd /workspace && cat "/workspace/a b" >/workspace/out', '/workspace', '/proj')).toBe('cd /proj && cat "/proj/a b" >/proj/out');
    expect(hostCommand('ls /workspace2 /x/workspace/y', '/workspace', '/proj')).toBe('ls /workspace2 /x/workspace/y');
    expect(hostCommand('echo hi', '/workspace', '/proj')).toBe('echo hi');
    // Glued to a short option, as write options often are.
    expect(hostCommand("sort -o/workspace/out x && tar -xf a.tar '-C/workspace/d'", '/workspace', '/proj')).toBe("sort -o/proj/out x && tar -xf a.tar '-C/proj/d'");
    expect(hostCommand('ls -x/workspace2', '/workspace', '/proj')).toBe('ls -x/workspace2');
  });
});
