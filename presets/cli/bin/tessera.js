#!/usr/bin/env node
// The `tessera` command. A plain launcher (committed, not built) so the bin link exists from
// `npm ci` on. The program is the CommonJS bundle in `dist-bundle/` (`npm run build`,
// scripts/bundle-cli.mjs), compiled from a V8 code cache kept between runs; without it, the
// unbundled `dist/main.js` (which still needs the kernel and contracts bundles of
// scripts/bundle-kernel.mjs). docs/adr/0002-cli-bundle-and-code-cache.md says why.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const bundleDir = fileURLToPath(new URL('../dist-bundle/', import.meta.url));
const entry = join(bundleDir, 'tessera.cjs');

/** The folder for compiled code: `TESSERA_COMPILE_CACHE` (`0` turns caching off), else the user's cache folder. */
function cacheRoot() {
  const setting = process.env.TESSERA_COMPILE_CACHE;
  if (setting === '0') return undefined;
  const home = process.env.HOME || homedir();
  if (!setting && !process.env.XDG_CACHE_HOME && !home) return undefined;
  const base = setting || join(process.env.XDG_CACHE_HOME || join(home, '.cache'), 'tessera', 'compile-cache');
  // One folder per installed copy, so two installs never drop each other's caches.
  return join(base, createHash('sha256').update(bundleDir).digest('hex').slice(0, 16));
}

/**
 * Cached code runs as this program, and V8 checks only the source's length, not its text: a
 * cache is used only from a folder and file this user owns that nobody else can write, and
 * that are not links.
 */
function private_(path, kind) {
  try {
    const stat = lstatSync(path);
    const ownUser = typeof process.getuid !== 'function' || stat.uid === process.getuid();
    return ownUser && (kind === 'dir' ? stat.isDirectory() : stat.isFile()) && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** Drops caches of bundle files that changed or are gone (an earlier build); keeps the others. */
function prune(root) {
  let names;
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  const current = new Set();
  for (const file of readdirSync(bundleDir)) {
    if (!file.endsWith('.cjs')) continue;
    const { size, mtimeMs } = statSync(join(bundleDir, file));
    current.add(`${file}-${process.versions.v8}-${size}-${Math.trunc(mtimeMs)}.bin`);
  }
  for (const name of names) if (name.endsWith('.bin') && !current.has(name)) rmSync(join(root, name), { force: true });
}

/**
 * Loads the bundle's files through Node's CommonJS loader, but compiles each with the V8 code
 * cache kept for it (the same thing Node 22's compile cache does, which Node 20 lacks). Returns
 * a function that saves the caches a run was missing, after the run, so the functions it
 * compiled lazily are in them too.
 */
function loadBundle() {
  const require = createRequire(entry);
  const Module = require('node:module');
  const root = cacheRoot();
  const fresh = [];
  const compile = Module.prototype._compile;
  Module.prototype._compile = function compileCached(content, filename) {
    if (root === undefined || !filename.startsWith(bundleDir)) return compile.call(this, content, filename);
    const { size, mtimeMs } = statSync(filename);
    // V8 refuses data from another V8 version or other flags; the name ties it to this exact file.
    const name = filename.slice(bundleDir.length).replaceAll(sep, '_');
    const cache = join(root, `${name}-${process.versions.v8}-${size}-${Math.trunc(mtimeMs)}.bin`);
    let cachedData;
    try {
      if (private_(root, 'dir') && private_(cache, 'file')) cachedData = readFileSync(cache);
    } catch {
      cachedData = undefined;
    }
    const script = new vm.Script(Module.wrap(content), {
      filename,
      ...(cachedData ? { cachedData } : {}),
      importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    if (cachedData === undefined || script.cachedDataRejected === true) fresh.push({ script, cache });
    const run = script.runInThisContext({ displayErrors: true });
    const local = createRequire(filename);
    return run.call(this.exports, this.exports, local, this, filename, dirname(filename));
  };
  const { main } = require(entry);
  const save = () => {
    if (fresh.length > 0) prune(root);
    for (const { script, cache } of fresh) {
      try {
        mkdirSync(dirname(cache), { recursive: true, mode: 0o700 });
        // A folder of ours from an older version may be readable by others: tighten it.
        const folder = lstatSync(dirname(cache));
        if (folder.isDirectory() && (typeof process.getuid !== 'function' || folder.uid === process.getuid())) chmodSync(dirname(cache), 0o700);
        if (!private_(dirname(cache), 'dir')) return;
        const temporary = `${cache}.${process.pid}.tmp`;
        writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        renameSync(temporary, cache);
      } catch {
        // A cache that cannot be written only costs the next run its compile time.
      }
    }
  };
  return { main, save };
}

const { main, save } = existsSync(entry) ? loadBundle() : { main: (await import('../dist/main.js')).main, save: undefined };
const code = await main(process.argv.slice(2));
save?.();
// A CLI run is over when main returns: exit once stdout and stderr have drained, rather than
// wait for timers or workers a plugin may keep (a background shell the model left running).
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
