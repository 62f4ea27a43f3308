#!/usr/bin/env node
// Post-build step (see docs/adr/0001-kernel-bundles-inversify.md): inline inversify and
// tapable into the kernel's runtime entry points, and @tessera/contracts's modules into one
// file of its own. inversify ships ~300 small ES modules that
// cost ~90 ms to load at start-up; one bundled file loads in ~5 ms. zod and @tessera/*
// stay external so every package shares one copy of them.
import { rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const external = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);

/** Bundles `inputs` (entry name → built file of `dir`) into `dir/dist-bundle`, zod, @tessera/* and built-ins left external. */
async function bundle(dir, inputs) {
  await rm(join(dir, 'dist-bundle'), { recursive: true, force: true });
  await build({
    input: Object.fromEntries(Object.entries(inputs).map(([name, file]) => [name, join(dir, 'dist', file)])),
    platform: 'node',
    external: (id) => external.has(id) || id === 'zod' || id.startsWith('zod/') || id.startsWith('@tessera/'),
    logLevel: 'warn',
    output: {
      dir: join(dir, 'dist-bundle'),
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: 'shared-[hash].js',
      sourcemap: true,
    },
  });
}

await bundle(join(root, 'kernel'), { index: 'index.js', testing: join('testing', 'index.js') });
// @tessera/contracts is ~40 small modules that every package imports: one file per entry
// (`./schemas` shares nothing with the main entry but zod) saves their separate resolves, reads
// and compiles at every start.
await bundle(join(root, 'contracts'), { index: 'index.js', schemas: 'schemas.js' });
