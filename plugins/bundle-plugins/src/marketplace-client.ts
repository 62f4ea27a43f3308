import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Diagnostic } from '@tessera/contracts';
import { readMarketplace, type Marketplace } from '@tessera/formats';
import { BundlePluginError } from './errors.js';
import { GitClient } from './git-client.js';
import { checkMarketplaceName, isMarketplaceName, type PluginPaths } from './plugin-paths.js';
import { redactCredentials } from './redact-credentials.js';
import { KnownMarketplacesFile, type KnownMarketplace, type MarketplaceSourceSpec } from './plugin-state.js';

/** Asked before Tessera trusts a marketplace or enables a plugin's hooks and MCP servers. */
export interface ApprovalRequest {
  kind: 'marketplace' | 'plugin';
  /** Marketplace name, or `name@marketplace`. */
  name: string;
  /** What is being agreed to, one line each (the source; the hooks and MCP servers a plugin runs). */
  details: string[];
}

/** Answers an approval request; true trusts. Must not throw (a throw counts as "no"). */
export type ApproveCallback = (request: ApprovalRequest) => boolean | Promise<boolean>;

export interface TrustOptions {
  /** `--yes`: approve without asking. */
  yes?: boolean;
  approve?: ApproveCallback;
}

/** A marketplace ready to read: its catalogue and where it came from. */
export interface ResolvedMarketplace {
  name: string;
  marketplace: Marketplace;
  file: string;
  known: KnownMarketplace;
  /** Declared by a settings file (`extraKnownMarketplaces`) rather than added with `marketplace add`. */
  fromSettings: boolean;
  diagnostics: Diagnostic[];
}

export interface MarketplaceClientOptions {
  paths: PluginPaths;
  /** Relative directory sources resolve from here. */
  cwd: string;
  git?: GitClient;
  /** Settings-declared marketplaces (`extraKnownMarketplaces`), read when needed. */
  declared?: () => Record<string, { source: Record<string, unknown> }>;
  fetch?: typeof fetch;
}

/** `git@host:path`, `ssh://`, `git://`, `file://`, or an http(s) URL that is not a `.json` file. */
const GIT_URL = /^(?:git@[^:]+:|ssh:\/\/|git:\/\/|file:\/\/|https?:\/\/)/i;
const GITHUB_REPO = /^([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+?)(?:\.git)?(?:[@#](.+))?$/;

/**
 * Marketplace sources (spec: MarketplaceClient): add, update, list and remove, kept in
 * `known_marketplaces.json` with clones under `marketplaces/<name>/`. The catalogue's own
 * `name` is the key, as in Claude Code; adding a second one with that name replaces the first.
 */
export class MarketplaceClient {
  private readonly known: KnownMarketplacesFile;
  private readonly git: GitClient;

  constructor(private readonly options: MarketplaceClientOptions) {
    this.known = new KnownMarketplacesFile(options.paths);
    this.git = options.git ?? new GitClient();
  }

  /**
   * What a `marketplace add` argument means: a local directory or file, a URL to a
   * `marketplace.json`, a git URL (`#ref` selects a branch or tag), or GitHub `owner/repo[@ref]`.
   */
  parseSource(input: string): MarketplaceSourceSpec {
    const text = input.trim();
    const local = isAbsolute(text) || text.startsWith('.') || text.startsWith('~') ? resolve(this.options.cwd, text.replace(/^~(?=\/|$)/, process.env.HOME ?? '~')) : resolve(this.options.cwd, text);
    if (existsSync(local)) return statSync(local).isDirectory() ? { source: 'directory', path: local } : { source: 'file', path: local };
    if (/^https?:\/\/[^#]+\.json(?:[?#].*)?$/i.test(text)) return { source: 'url', url: text };
    if (GIT_URL.test(text)) {
      const hash = text.indexOf('#');
      return hash < 0 ? { source: 'git', url: text } : { source: 'git', url: text.slice(0, hash), ref: text.slice(hash + 1) };
    }
    const github = GITHUB_REPO.exec(text);
    if (github !== null) return { source: 'github', repo: github[1]!, ...(github[2] === undefined ? {} : { ref: github[2] }) };
    throw new BundlePluginError('usage', `"${input}" is not a marketplace source: give a directory, a marketplace.json URL, a git URL (with #ref) or a GitHub owner/repo.`, { source: input });
  }

  /** Adds (or replaces) a marketplace after the person trusts it. */
  async add(input: string | MarketplaceSourceSpec, trust: TrustOptions = {}): Promise<ResolvedMarketplace> {
    const source = typeof input === 'string' ? this.parseSource(input) : input;
    await requireApproval(trust, { kind: 'marketplace', name: describeSource(source), details: [`source: ${describeSource(source)}`] }, 'marketplace_approval_required');
    return this.materialize(source, { trusted: true });
  }

  /** Re-fetches one marketplace, or every known one; local directories are read in place. */
  async update(name?: string): Promise<ResolvedMarketplace[]> {
    const all = this.known.all();
    const names = name === undefined ? Object.keys(all) : [name];
    const updated: ResolvedMarketplace[] = [];
    for (const each of names) {
      const known = all[each];
      if (known === undefined) throw notFound(each, Object.keys(all));
      updated.push(await this.materialize(known.source, { trusted: known.trusted === true, expectedName: each }));
    }
    return updated;
  }

  /** Known marketplaces plus those a settings file declares (not yet fetched ones included). */
  list(): Array<{ name: string; source: MarketplaceSourceSpec; installLocation?: string; trusted: boolean; fromSettings: boolean; lastUpdated?: string }> {
    const known = this.known.all();
    const rows = Object.entries(known).map(([name, entry]) => ({ name, source: entry.source, installLocation: entry.installLocation, trusted: entry.trusted === true, fromSettings: false, lastUpdated: entry.lastUpdated }));
    for (const [name, declared] of Object.entries(this.options.declared?.() ?? {})) {
      if (known[name] !== undefined) continue;
      const source = this.declaredSource(name, declared.source);
      if (source !== undefined) rows.push({ name, source, installLocation: '', trusted: false, fromSettings: true, lastUpdated: '' });
    }
    return rows;
  }

  /** Forgets a marketplace and deletes its clone (a local directory is left alone). */
  remove(name: string): void {
    const known = this.known.get(name);
    if (known === undefined) throw notFound(name, Object.keys(this.known.all()));
    if (isMarketplaceName(name) && known.installLocation === this.options.paths.marketplaceDir(name)) rmSync(known.installLocation, { recursive: true, force: true });
    this.known.remove(name);
  }

  /**
   * The catalogue of `name`: a known marketplace, or one a settings file declares (fetched on
   * first use, after the person trusts it — the trust options say how to ask).
   */
  async resolve(name: string, trust: TrustOptions = {}): Promise<ResolvedMarketplace> {
    const known = this.known.get(name);
    if (known !== undefined) return this.read(name, known, false);
    const declared = this.options.declared?.()[name];
    const source = declared === undefined ? undefined : this.declaredSource(name, declared.source);
    if (source === undefined) throw notFound(name, this.list().map((row) => row.name));
    await requireApproval(trust, { kind: 'marketplace', name, details: [`source: ${describeSource(source)} (declared in project settings)`] }, 'marketplace_approval_required');
    const resolved = await this.materialize(source, { trusted: true, expectedName: name });
    return { ...resolved, fromSettings: true };
  }

  /** Records that the person trusts `name` (first install from a marketplace added without `--yes`). */
  trust(name: string): void {
    const known = this.known.get(name);
    if (known !== undefined && known.trusted !== true) this.known.put(name, { ...known, trusted: true });
  }

  isTrusted(name: string): boolean {
    return this.known.get(name)?.trusted === true;
  }

  private read(name: string, known: KnownMarketplace, fromSettings: boolean): ResolvedMarketplace {
    const file = marketplaceFile(known.installLocation);
    checkMarketplaceName(name, this.options.paths.knownMarketplacesFile);
    const { value, diagnostics } = readMarketplace(file);
    // A bad catalogue name is as fatal as no catalogue: the name becomes cache folders.
    const error = diagnostics.find((diagnostic) => diagnostic.severity === 'error' && (diagnostic.path === undefined || diagnostic.path === 'name'));
    if (value.name === '' || error !== undefined) {
      throw new BundlePluginError('marketplace_invalid', `Marketplace "${name}" cannot be read (${file}): ${error?.message ?? diagnostics[0]?.message ?? 'no catalogue'}. Run \`plugin marketplace update ${name}\` or fix the file.`, { file });
    }
    return { name, marketplace: value, file, known, fromSettings, diagnostics };
  }

  /** Fetches a source into place, reads its catalogue and records it under the catalogue's name. */
  private async materialize(source: MarketplaceSourceSpec, options: { trusted: boolean; expectedName?: string }): Promise<ResolvedMarketplace> {
    const { paths } = this.options;
    let installLocation: string;
    let staged: string | undefined;
    if (source.source === 'directory' || source.source === 'file') {
      const path = resolve(this.options.cwd, source.path ?? '.');
      installLocation = source.source === 'file' ? (basename(dirname(path)) === '.claude-plugin' ? dirname(dirname(path)) : dirname(path)) : path;
      if (!existsSync(marketplaceFile(installLocation)) && source.source === 'directory') {
        throw new BundlePluginError('marketplace_invalid', `${path} has no .claude-plugin/marketplace.json; a marketplace directory needs one.`, { path });
      }
    } else {
      // A random name: two settings-declared marketplaces may be fetched in the same millisecond.
      staged = join(paths.root, 'marketplaces', `.staging-${randomUUID()}`);
      rmSync(staged, { recursive: true, force: true });
      try {
        if (source.source === 'url') await this.download(source, staged);
        else {
          const url = source.source === 'github' ? githubUrl(source.repo!) : source.url!;
          await this.git.checkout(url, staged, { ...(source.ref === undefined ? {} : { ref: source.ref }), label: `marketplace ${describeSource(source)}` }).catch((error: unknown) => {
            throw error instanceof BundlePluginError ? new BundlePluginError('marketplace_fetch_failed', error.message, error.details ?? {}, error) : error;
          });
        }
      } catch (error) {
        rmSync(staged, { recursive: true, force: true });
        throw error;
      }
      installLocation = staged;
    }
    const file = marketplaceFile(installLocation);
    const { value, diagnostics } = readMarketplace(file);
    if (value.name === '') {
      if (staged !== undefined) rmSync(staged, { recursive: true, force: true });
      const reason = diagnostics.find((diagnostic) => diagnostic.severity === 'error')?.message ?? 'no catalogue';
      throw new BundlePluginError('marketplace_invalid', `${describeSource(source)} is not a usable marketplace (${file}): ${reason}`, { file });
    }
    // The name becomes marketplaces/<name> (deleted and replaced below) and cache/<name>: a
    // name such as `../../.ssh` must stop here, before anything on disk changes.
    try {
      checkMarketplaceName(value.name, file);
    } catch (error) {
      if (staged !== undefined) rmSync(staged, { recursive: true, force: true });
      throw error;
    }
    if (staged !== undefined) {
      // Swap the new clone in whole: a failed fetch above left the previous one untouched.
      const target = paths.marketplaceDir(value.name);
      rmSync(target, { recursive: true, force: true });
      mkdirSync(dirname(target), { recursive: true });
      renameSync(staged, target);
      installLocation = target;
    }
    const known: KnownMarketplace = { source, installLocation, lastUpdated: new Date().toISOString(), ...(options.trusted ? { trusted: true } : {}) };
    this.known.put(value.name, known);
    if (options.expectedName !== undefined && options.expectedName !== value.name) {
      diagnostics.push({ severity: 'warning', file, path: 'name', message: `The catalogue is named "${value.name}", not "${options.expectedName}"; it is recorded as "${value.name}".` });
    }
    return this.read(value.name, known, false);
  }

  private async download(source: MarketplaceSourceSpec, dest: string): Promise<void> {
    const url = source.url!;
    let text: string;
    try {
      const response = await (this.options.fetch ?? fetch)(url, { headers: source.headers ?? {} });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } catch (error) {
      throw new BundlePluginError('marketplace_fetch_failed', redactCredentials(`Downloading ${url} failed: ${(error as Error).message}. Check the URL and try again.`), { url: redactCredentials(url) }, error);
    }
    mkdirSync(join(dest, '.claude-plugin'), { recursive: true });
    writeFileSync(join(dest, '.claude-plugin', 'marketplace.json'), text);
  }

  /** A settings `extraKnownMarketplaces` source in the shape `known_marketplaces.json` keeps. */
  private declaredSource(name: string, raw: Record<string, unknown>): MarketplaceSourceSpec | undefined {
    const kind = raw.source;
    const text = (key: string) => (typeof raw[key] === 'string' ? (raw[key] as string) : undefined);
    if (kind === 'github' && text('repo')) return { source: 'github', repo: text('repo')!, ...(text('ref') ? { ref: text('ref')! } : {}) };
    if ((kind === 'git' || kind === 'url') && text('url')) {
      const url = text('url')!;
      if (kind === 'url' && /\.json(?:[?#].*)?$/i.test(url)) return { source: 'url', url };
      return { source: 'git', url, ...(text('ref') ? { ref: text('ref')! } : {}) };
    }
    if ((kind === 'directory' || kind === 'file') && text('path')) return { source: kind, path: resolve(this.options.cwd, text('path')!) };
    void name;
    return undefined;
  }
}

export function marketplaceFile(root: string): string {
  return join(root, '.claude-plugin', 'marketplace.json');
}

/** GitHub `owner/repo` as the https URL git clones. */
export function githubUrl(repo: string): string {
  return `https://github.com/${repo.replace(/\.git$/, '')}.git`;
}

/** The source as shown to people, credentials redacted. */
export function describeSource(source: MarketplaceSourceSpec): string {
  switch (source.source) {
    case 'github':
      return `github:${source.repo}${source.ref ? `@${source.ref}` : ''}`;
    case 'git':
      return redactCredentials(`${source.url}${source.ref ? `#${source.ref}` : ''}`);
    case 'url':
      return redactCredentials(source.url!);
    default:
      return source.path ?? source.source;
  }
}

/** Resolves when the person approved; throws a `*_approval_required` error otherwise. */
export async function requireApproval(trust: TrustOptions, request: ApprovalRequest, code: 'marketplace_approval_required' | 'plugin_approval_required'): Promise<void> {
  if (trust.yes === true) return;
  if (trust.approve !== undefined) {
    const answer = await Promise.resolve()
      .then(() => trust.approve!(request))
      .catch(() => false);
    if (answer === true) return;
    throw new BundlePluginError(code, `Not approved: ${request.kind} ${request.name} was not trusted, so nothing was changed.`, { name: request.name });
  }
  const what = request.kind === 'marketplace' ? `marketplace ${request.name} is not trusted yet` : `${request.name} runs code on your machine`;
  throw new BundlePluginError(code, `${what}:\n${request.details.map((line) => `  ${line}`).join('\n')}\nRe-run with --yes to trust it.`, { name: request.name, details: request.details });
}

function notFound(name: string, known: string[]): BundlePluginError {
  return new BundlePluginError('marketplace_not_found', `No marketplace named "${name}"${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}. Add it with \`plugin marketplace add <source>\`.`, { marketplace: name });
}
