import { describe, expect, it } from 'vitest';
import { isInsidePath } from './shared-paths.js';

describe('isInsidePath', () => {
  it('is true for the root and paths below it, false for siblings that share a prefix and for parents', () => {
    expect(isInsidePath('/srv/app', '/srv/app')).toBe(true);
    expect(isInsidePath('/srv/app/src/x.ts', '/srv/app')).toBe(true);
    expect(isInsidePath('/srv/app/src', '/srv/app/')).toBe(true);
    expect(isInsidePath('/srv/apple', '/srv/app')).toBe(false);
    expect(isInsidePath('/srv', '/srv/app')).toBe(false);
    expect(isInsidePath('/etc/passwd', '/')).toBe(true);
    // On POSIX a backslash is part of a name: "app\\x" is a sibling of "app", not inside it.
    if (process.platform !== 'win32') expect(isInsidePath('/srv/app\\x', '/srv/app')).toBe(false);
  });
});
