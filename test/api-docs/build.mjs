#!/usr/bin/env node
// `npm run docs:api`: the API reference of contracts and kernel into docs/api/<module>/ (HTML,
// not committed). TypeDoc and its TypeScript 5 are installed here on first use.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(here, 'node_modules', 'typedoc'))) {
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
  if (install.status !== 0) process.exit(install.status ?? 1);
}
const entries = { contracts: 'contracts/src/index.ts', kernel: 'kernel/src/index.ts', 'kernel-testing': 'kernel/src/testing/index.ts' };
let failed = false;
for (const [name, entry] of Object.entries(entries)) {
  const run = spawnSync(process.execPath, [join(here, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--options', join(here, 'typedoc.json'), '--entryPoints', join(here, '..', '..', entry), '--out', join(here, '..', '..', 'docs', 'api', name)], { cwd: here, stdio: 'inherit' });
  failed ||= run.status !== 0;
}
process.exit(failed ? 1 : 0);
