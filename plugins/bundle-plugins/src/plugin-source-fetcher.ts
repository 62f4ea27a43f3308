import { execFile } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Diagnostic } from '@tessera/contracts';
import type { MarketplaceEntry } from '@tessera/formats';
import { BundlePluginError } from './errors.js';
import { GitClient } from './git-client.js';
import { githubUrl, type ResolvedMarketplace } from './marketplace-client.js';
import { redactCredentials } from './redact-credentials.js';

export interface FetchedPlugin {
  /** The commit the files came from, when git was involved (the plugin's or the marketplace clone's). */
  gitCommitSha?: string;
  diagnostics: Diagnostic[];
}

export interface PluginSourceFetcherOptions {
  git?: GitClient;
  /** The `npm` executable; default `npm`. */
  npm?: string;
}

/**
 * Puts a marketplace entry's plugin files into an empty staging directory, whatever the source:
 * a path inside the marketplace (copied), GitHub, a git URL, a `git-subdir` (sparse) or an npm
 * package (`npm pack`). A pinned `sha` is checked out and verified. `archive` and `command`
 * sources are refused with a message: Tessera does not run them.
 */
export class PluginSourceFetcher {
  private readonly git: GitClient;

  constructor(private readonly options: PluginSourceFetcherOptions = {}) {
    this.git = options.git ?? new GitClient();
  }

  async fetch(entry: MarketplaceEntry, market: ResolvedMarketplace, dest: string): Promise<FetchedPlugin> {
    const source = entry.source;
    const label = `${entry.name}@${market.name}`;
    const diagnostics: Diagnostic[] = [];
    switch (source.source) {
      case 'relative': {
        if (market.known.source.source === 'url') {
          throw new BundlePluginError('plugin_source_unsupported', `${label} uses a relative path (${source.path}), but marketplace ${market.name} was added from a URL to its marketplace.json, so only that file is there. Add the marketplace from its git repository instead.`, { plugin: label });
        }
        if (!existsSync(source.resolvedPath)) {
          throw new BundlePluginError('plugin_not_found', `${label}: ${source.resolvedPath} does not exist in the marketplace. Run \`plugin marketplace update ${market.name}\`.`, { plugin: label, path: source.resolvedPath });
        }
        copyPluginTree(source.resolvedPath, dest, market.marketplace.root, diagnostics, label);
        const sha = await this.git.run(['rev-parse', 'HEAD'], market.marketplace.root).catch(() => undefined);
        return { ...(sha !== undefined && /^[0-9a-f]{40}$/.test(sha) && this.isOwnRepo(market) ? { gitCommitSha: sha } : {}), diagnostics };
      }
      case 'github':
      case 'url': {
        const url = source.source === 'github' ? githubUrl(source.repo) : source.url;
        const subdir = source.source === 'url' ? source.path : undefined;
        return this.fromGit(url, subdir, source, label, dest, diagnostics);
      }
      case 'git-subdir': {
        const url = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(source.url) ? githubUrl(source.url) : source.url;
        return this.fromGit(url, source.path, source, label, dest, diagnostics);
      }
      case 'npm':
        await this.fromNpm(source.package, source.version, source.registry, label, dest, diagnostics);
        return { diagnostics };
      default:
        throw new BundlePluginError('plugin_source_unsupported', `${label} comes from a "${source.source}" source, which Tessera does not install. Install it by hand and load it with a plugin directory.`, { plugin: label, source: source.source });
    }
  }

  /** A relative source's commit counts only when the marketplace itself is a clone. */
  private isOwnRepo(market: ResolvedMarketplace): boolean {
    return existsSync(join(market.marketplace.root, '.git'));
  }

  private async fromGit(url: string, subdir: string | undefined, pin: { ref?: string; sha?: string }, label: string, dest: string, diagnostics: Diagnostic[]): Promise<FetchedPlugin> {
    const checkout = `${dest}.git-checkout`;
    rmSync(checkout, { recursive: true, force: true });
    try {
      const result = await this.git.checkout(url, checkout, {
        label,
        ...(pin.ref === undefined ? {} : { ref: pin.ref }),
        ...(pin.sha === undefined ? {} : { sha: pin.sha }),
        ...(subdir === undefined ? {} : { sparsePaths: [subdir] }),
      });
      const root = subdir === undefined ? checkout : resolve(checkout, subdir);
      if (root !== checkout && !root.startsWith(checkout + sep)) {
        throw new BundlePluginError('plugin_source_unsupported', `${label}: path ${JSON.stringify(subdir)} leaves the repository.`, { plugin: label });
      }
      if (!existsSync(root)) throw new BundlePluginError('plugin_not_found', `${label}: ${subdir} is not in ${redactCredentials(url)} at ${result.sha}.`, { plugin: label, url: redactCredentials(url) });
      copyPluginTree(root, dest, checkout, diagnostics, label);
      return { gitCommitSha: result.sha, diagnostics };
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  }

  private async fromNpm(name: string, version: string | undefined, registry: string | undefined, label: string, dest: string, diagnostics: Diagnostic[]): Promise<void> {
    const work = `${dest}.npm`;
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    const spec = version === undefined || /^(?:file:|\.|\/)/.test(name) ? name : `${name}@${version}`;
    try {
      const output = await run(this.options.npm ?? 'npm', ['pack', spec, '--pack-destination', work, '--ignore-scripts', '--json', ...(registry ? ['--registry', registry] : [])], work);
      const packed = (JSON.parse(output) as Array<{ filename: string }>)[0]?.filename;
      if (packed === undefined) throw new Error('npm pack produced no tarball');
      await run('tar', ['-xzf', join(work, basenameOf(packed)), '-C', work], work);
      // Copied, not moved: a tarball can hold symlinks to any file of the user's, and the
      // symlink policy (only links inside the package are kept) applies to npm sources too.
      copyPluginTree(join(work, 'package'), dest, join(work, 'package'), diagnostics, label);
    } catch (error) {
      if (error instanceof BundlePluginError) throw error;
      const detail = (error as { stderr?: string }).stderr || (error as Error).message;
      throw new BundlePluginError('plugin_fetch_failed', redactCredentials(`${label}: npm pack ${spec} failed: ${detail}. Check the package name and your registry access.`), { plugin: label, package: spec }, error);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

function basenameOf(file: string): string {
  return file.split(/[\\/]/).at(-1)!;
}

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(command, args, { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { stderr: String(stderr).trim() }));
      else resolvePromise(String(stdout));
    });
  });
}

/**
 * Copies a plugin directory as Claude Code's cache copy does: `.git` left out; a symlink kept
 * when it points inside the plugin, replaced by its target's content when it points elsewhere
 * in the marketplace, and dropped (with a warning) when it points outside. The plugin directory
 * itself may be a symlink only to somewhere inside the marketplace (or repository, or package).
 */
export function copyPluginTree(from: string, to: string, marketRoot: string, diagnostics: Diagnostic[], label = from): void {
  const pluginRoot = realpathSync(from);
  const marketReal = realpathSync(marketRoot);
  const inside = (path: string, root: string) => path === root || path.startsWith(root + sep);
  if (!inside(pluginRoot, marketReal)) {
    throw new BundlePluginError('plugin_source_unsupported', `${label}: ${from} leaves the marketplace through a symlink (to ${pluginRoot}); nothing was installed. Ask the marketplace owner to keep plugin folders inside the marketplace.`, { plugin: label, path: from });
  }
  const visit = (source: string, target: string): void => {
    mkdirSync(target, { recursive: true });
    for (const entry of readdirSync(source, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const path = join(source, entry.name);
      const destination = join(target, entry.name);
      if (entry.isSymbolicLink()) {
        let real: string;
        try {
          real = realpathSync(path);
        } catch {
          diagnostics.push({ severity: 'warning', file: path, message: 'Broken symlink; left out of the installed copy.' });
          continue;
        }
        // Relative to the copy, so an absolute link does not point back into the source.
        if (inside(real, pluginRoot)) symlinkSync(relative(dirname(destination), join(to, relative(pluginRoot, real))) || '.', destination);
        else if (inside(real, marketReal)) cpSync(real, destination, { recursive: true, dereference: true });
        else diagnostics.push({ severity: 'warning', file: path, message: `Symlink to ${real}, outside the marketplace; left out of the installed copy (Claude Code drops it too).` });
      } else if (entry.isDirectory()) visit(path, destination);
      else if (lstatSync(path).isFile()) cpSync(path, destination);
    }
  };
  visit(from, to);
}
