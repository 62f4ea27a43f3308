#!/usr/bin/env node
// Post-build step: bundle the `tessera` command (presets/cli/dist/main.js and everything it
// imports) into a few CommonJS files under presets/cli/dist-bundle/ (entry: tessera.cjs).
// Loading ~700 small ES modules cost the CLI more than half of its start-up; a few files load in
// a fraction of that, and, being classic scripts, they can be compiled from a V8 code cache that
// the bin keeps between runs (Node 20 has no module compile cache).
// See docs/adr/0002-cli-bundle-and-code-cache.md.
//
// Unlike the kernel's bundle this is a whole program: zod and @tessera/* are inlined, which is
// safe because nothing else shares the CLI process. Dynamic imports stay separate chunks
// (`require`d when first imported), so a run loads only what it uses: one provider SDK, no
// subcommand it does not run. External: Node built-ins, native modules (better-sqlite3), and
// cosmiconfig (its loaders resolve optional packages at run time).
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
  input: { tessera: join(cli, 'dist', 'main.js') },
  platform: 'node',
  external,
  logLevel: 'warn',
  output: {
    dir: join(cli, 'dist-bundle'),
    format: 'cjs',
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
    sourcemap: true,
  },
});
