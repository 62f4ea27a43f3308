#!/usr/bin/env node
// Makes `npm test` / `npm run demo` work on a fresh clone: installs the workspace from the
// lockfile when node_modules is missing or older than package-lock.json. Does nothing otherwise.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockfile = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');

const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lockfile).mtimeMs;
if (stale) {
  console.error('Installing dependencies (npm ci)…');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('npm ci failed; see the output above. Node >= 20.19 and access to the npm registry are required.');
    process.exit(result.status ?? 1);
  }
}
