import { spawn } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sandbox } from './bundle-plugins.test-helper.js';
import { updateJsonObject } from './json-file.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => (box = sandbox()));
afterEach(() => box.cleanup());

/**
 * Another process's update, done the way this package does it: take the lock, read, wait a
 * while (a slow disk), write `key`, release the lock.
 */
const OTHER_WRITER = `
const fs = require('node:fs');
const [file, key] = process.argv.slice(1);
fs.writeFileSync(file + '.lock', String(process.pid), { flag: 'wx' });
const value = JSON.parse(fs.readFileSync(file, 'utf8'));
console.log('locked');
setTimeout(() => {
  value[key] = true;
  fs.writeFileSync(file, JSON.stringify(value));
  fs.rmSync(file + '.lock');
}, 300);
`;

describe('updateJsonObject', () => {
  it('waits for another process that holds the lock, so neither update is lost', async () => {
    const file = join(box.root, 'installed_plugins.json');
    writeFileSync(file, '{}');
    const other = spawn(process.execPath, ['-e', OTHER_WRITER, file, 'theirs'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => other.stdout.once('data', () => resolve()));
    updateJsonObject(file, (value) => {
      value.ours = true;
    });
    await new Promise((resolve) => other.once('exit', resolve));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ theirs: true, ours: true });
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('takes over a lock left by a process that died', () => {
    const file = join(box.root, 'installed_plugins.json');
    writeFileSync(`${file}.lock`, '12345');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    updateJsonObject(file, (value) => {
      value.ours = true;
    });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ ours: true });
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
