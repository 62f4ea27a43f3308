import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { BundlePluginError } from './errors.js';
import { redactCredentials } from './redact-credentials.js';

export interface GitCheckout {
  /** The commit checked out (40 hex). */
  sha: string;
}

export interface GitCheckoutOptions {
  /** Branch or tag; default the remote's HEAD. */
  ref?: string;
  /** A pinned commit: fetched and verified after checkout; a repository without it is refused. */
  sha?: string;
  /** Only these paths are checked out (`git-subdir`). */
  sparsePaths?: readonly string[];
  /** Names the plugin or marketplace in messages. */
  label: string;
}

const TIMEOUT_MS = 120_000;

/**
 * The `git` CLI, as Claude Code uses it: shallow clones, sparse checkouts for `git-subdir`, and
 * pinned commits verified after checkout. Git's own transport and credentials apply (SSH keys,
 * credential helpers); nothing is prompted for (`GIT_TERMINAL_PROMPT=0`).
 */
export class GitClient {
  constructor(private readonly command = 'git') {}

  async run(args: readonly string[], cwd?: string): Promise<string> {
    return new Promise((resolvePromise, reject) => {
      execFile(
        this.command,
        [...args],
        { cwd, timeout: TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } },
        (error, stdout, stderr) => {
          if (error) reject(Object.assign(error, { stderr: String(stderr).trim() }));
          else resolvePromise(String(stdout).trim());
        },
      );
    });
  }

  /** Checks `url` out into the empty directory `dest` (depth 1). */
  async checkout(url: string, dest: string, options: GitCheckoutOptions): Promise<GitCheckout> {
    mkdirSync(dest, { recursive: true });
    // git's own stderr repeats the URL, token included: both are redacted.
    const shown = redactCredentials(url);
    const fail = (what: string, error: unknown): never => {
      const detail = redactCredentials((error as { stderr?: string }).stderr || (error as Error).message);
      throw new BundlePluginError('plugin_fetch_failed', `${redactCredentials(options.label)}: ${what} ${shown} failed: ${detail}. Check the URL and your access to it, then try again.`, { url: shown }, error);
    };
    try {
      await this.run(['init', '-q'], dest);
      await this.run(['remote', 'add', 'origin', url], dest);
      if (options.sparsePaths !== undefined && options.sparsePaths.length > 0) {
        await this.run(['sparse-checkout', 'set', '--no-cone', ...options.sparsePaths.map((path) => `/${path.replace(/^\.?\/+|\/+$/g, '')}/`)], dest);
      }
    } catch (error) {
      fail('preparing a checkout of', error);
    }
    if (options.sha !== undefined) return this.checkoutPinned(url, dest, options.sha, options, fail);
    try {
      await this.run(['fetch', '-q', '--depth', '1', 'origin', options.ref ?? 'HEAD'], dest);
      await this.run(['checkout', '-q', 'FETCH_HEAD'], dest);
    } catch (error) {
      fail(options.ref === undefined ? 'cloning' : `fetching ${options.ref} of`, error);
    }
    return { sha: await this.run(['rev-parse', 'HEAD'], dest) };
  }

  /** The commit at `ref` (or HEAD) on the remote, without fetching it. */
  async remoteHead(url: string, ref = 'HEAD'): Promise<string | undefined> {
    const output = await this.run(['ls-remote', url, ref]).catch(() => '');
    return /^[0-9a-f]{40}/.exec(output)?.[0];
  }

  private async checkoutPinned(url: string, dest: string, sha: string, options: GitCheckoutOptions, fail: (what: string, error: unknown) => never): Promise<GitCheckout> {
    const wanted = sha.toLowerCase();
    const refused = (why: string): never => {
      throw new BundlePluginError(
        'plugin_sha_mismatch',
        redactCredentials(`${options.label}: the marketplace pins commit ${wanted}, but ${why}. The repository was rewritten or the entry is wrong; nothing was installed. Ask the marketplace owner to update the pin.`),
        { url: redactCredentials(url), sha: wanted },
      );
    };
    try {
      await this.run(['fetch', '-q', '--depth', '1', 'origin', wanted], dest);
    } catch {
      // Servers that refuse to fetch a bare commit: fetch the ref's history and look for it.
      try {
        await this.run(['fetch', '-q', 'origin', options.ref ?? 'HEAD'], dest);
      } catch (error) {
        fail('fetching', error);
      }
      const found = await this.run(['cat-file', '-e', `${wanted}^{commit}`], dest).then(
        () => true,
        () => false,
      );
      if (!found) refused(`${url} does not contain it`);
    }
    try {
      await this.run(['checkout', '-q', wanted], dest);
    } catch (error) {
      fail(`checking out ${wanted} from`, error);
    }
    const head = (await this.run(['rev-parse', 'HEAD'], dest)).toLowerCase();
    if (head !== wanted) refused(`the checkout is at ${head}`);
    return { sha: head };
  }
}
