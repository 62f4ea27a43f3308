import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resetUserSettings } from './host-adapters.js';

let home: string | undefined;
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

describe('resetUserSettings (/reset in the terminal)', () => {
  it("moves ~/.tessera/settings.json to a dated backup, keeps its bytes, and leaves Claude Code's settings alone", () => {
    home = mkdtempSync(join(tmpdir(), 'tessera-reset-'));
    mkdirSync(join(home, '.tessera'));
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.tessera', 'settings.json'), '{"model":"mine"}\n');
    writeFileSync(join(home, '.claude', 'settings.json'), '{"theme":"dark"}\n');
    const line = resetUserSettings(home, new Date(Date.UTC(2026, 11, 7, 8, 9, 10, 11)));
    expect(existsSync(join(home, '.tessera', 'settings.json'))).toBe(false);
    const backups = readdirSync(join(home, '.tessera'));
    expect(backups).toEqual(['settings.json.2026-12-07T08-09-10-011Z.bak']);
    expect(readFileSync(join(home, '.tessera', backups[0]!), 'utf8')).toBe('{"model":"mine"}\n');
    expect(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')).toBe('{"theme":"dark"}\n');
    expect(line).toContain(backups[0]);
  });

  it('says so when there is nothing to reset', () => {
    home = mkdtempSync(join(tmpdir(), 'tessera-reset-'));
    expect(resetUserSettings(home)).toMatch(/no user settings to reset/);
  });
});
