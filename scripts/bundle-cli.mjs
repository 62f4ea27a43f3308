#!/usr/bin/env node
// Post-build step: bundle the `tessera` command (presets/cli/dist/main.js and everything it
// imports) into presets/cli/dist-bundle/, the same way bundle-kernel.mjs bundles the kernel
// (see docs/adr/0001-kernel-bundles-inversify.md). Loading ~700 small ES modules cost the CLI
// more than half of its start-up; a few bundled files load in a fraction of that. The bin
// prefers the bundle and falls back to dist/main.js when it is missing.
//
// Unlike the kernel's bundle this is a whole program: zod and @tessera/* are inlined, which is
// safe because nothing else shares the CLI process. Dynamic imports (subcommands, the print
// path, a provider SDK) stay separate chunks, so a run loads only what it uses.
// External: Node built-ins, native modules (better-sqlite3), and cosmiconfig (its loaders
// resolve optional packages at run time).
import { rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'presets', 'cli');
const EXTERNAL_PACKAGES = ['better-sqlite3', 'cosmiconfig'];
const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
const external = (id) => builtins.has(id) || EXTERNAL_PACKAGES.some((name) => id === name || id.startsWith(`${name}/`));

await rm(join(cli, 'dist-bundle'), { recursive: true, force: true });
await build({
  input: { main: join(cli, 'dist', 'main.js') },
  platform: 'node',
  external,
  logLevel: 'warn',
  output: {
    dir: join(cli, 'dist-bundle'),
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    sourcemap: true,
  },
});
