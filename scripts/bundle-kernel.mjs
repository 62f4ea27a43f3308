#!/usr/bin/env node
// Post-build step (see docs/adr/0001-kernel-bundles-inversify.md): inline inversify and
// tapable into the kernel's runtime entry points. inversify ships ~300 small ES modules that
// cost ~90 ms to load at start-up; one bundled file loads in ~5 ms. zod and @tessera/*
// stay external so every package shares one copy of them.
import { rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const kernel = join(dirname(fileURLToPath(import.meta.url)), '..', 'kernel');
const external = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);

await rm(join(kernel, 'dist-bundle'), { recursive: true, force: true });
await build({
  input: {
    index: join(kernel, 'dist', 'index.js'),
    testing: join(kernel, 'dist', 'testing', 'index.js'),
  },
  platform: 'node',
  external: (id) => external.has(id) || id === 'zod' || id.startsWith('zod/') || id.startsWith('@tessera/'),
  logLevel: 'warn',
  output: {
    dir: join(kernel, 'dist-bundle'),
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'shared-[hash].js',
    sourcemap: true,
  },
});
