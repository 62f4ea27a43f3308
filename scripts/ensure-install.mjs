#!/usr/bin/env node
// Makes `npm test` / `npm run demo` work on a fresh clone: installs the workspace from the
// lockfile when node_modules is missing or older than package-lock.json, and rebuilds native
// addons (better-sqlite3) when node_modules was built for another Node ABI (say, installed on
// Node 20 and now run on Node 24). Does nothing otherwise.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockfile = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(args, failure) {
  const result = spawnSync(npm, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(failure);
    process.exit(result.status ?? 1);
  }
}

const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lockfile).mtimeMs;
if (stale) {
  console.error('Installing dependencies (npm ci)…');
  run(['ci', '--no-audit', '--no-fund'], 'npm ci failed; see the output above. Node >= 20.19 and access to the npm registry are required.');
} else if (!nativeAddonsLoad()) {
  console.error(`node_modules was built for another Node version; rebuilding native addons for Node ${process.version}…`);
  run(['rebuild'], 'npm rebuild failed; see the output above. Delete node_modules and run the command again to reinstall.');
}

/** False when a native addon was compiled for another Node ABI (the only native one is better-sqlite3). */
function nativeAddonsLoad() {
  try {
    const Database = createRequire(join(root, 'package.json'))('better-sqlite3');
    new Database(':memory:').close();
    return true;
  } catch (error) {
    return !/NODE_MODULE_VERSION|ERR_DLOPEN_FAILED|invalid ELF|compiled against a different Node/i.test(`${error?.code ?? ''} ${error?.message ?? ''}`);
  }
}
