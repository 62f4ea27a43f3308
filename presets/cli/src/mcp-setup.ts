import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describeError } from '@tessera/contracts';
import type { McpAuthorize, McpProjectApprovalSettings } from '@tessera/plugin-mcp/plugin';
import type { CliFlags } from './args.js';
import type { CliPresetOptions } from './preset-composition.js';

/** MCP servers Claude Code keeps in `~/.claude.json`: user scope at the top, local scope per project. */
export interface ClaudeJsonServers {
  user?: Record<string, unknown>;
  local?: Record<string, unknown>;
  warnings: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Reads `mcpServers` (user) and `projects[<cwd>].mcpServers` (local) from `~/.claude.json`, as
 * Claude Code stores them. A missing file is no servers; a broken one is a warning, never a stop.
 */
export function readClaudeJsonServers(home: string, cwd: string): ClaudeJsonServers {
  const file = join(home, '.claude.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { warnings: code === 'ENOENT' ? [] : [`warning: cannot read ${file} (${code ?? describeError(error)}); its MCP servers are not used`] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { warnings: [`warning: ${file} is not valid JSON (${describeError(error)}); its MCP servers are not used. Fix the file to use them.`] };
  }
  if (!isObject(value)) return { warnings: [`warning: ${file} does not hold a JSON object; its MCP servers are not used`] };
  const project = isObject(value.projects) ? value.projects[cwd] : undefined;
  return {
    ...(isObject(value.mcpServers) ? { user: value.mcpServers } : {}),
    ...(isObject(project) && isObject(project.mcpServers) ? { local: project.mcpServers } : {}),
    warnings: [],
  };
}

const AUTHORIZE_TIMEOUT_MS = 5 * 60_000;

/**
 * The OAuth redirect step for a terminal: the authorization URL is shown (and opened with the
 * platform's opener when there is one), and a one-shot loopback server on the redirect URL's
 * port takes the code. Gives up after five minutes.
 */
export function loopbackAuthorize(show: (message: string) => void, open: (url: string) => void = openInBrowser): McpAuthorize {
  return (request) => {
    // Sign-ins share the redirect port: a second listener would fail with EADDRINUSE while the
    // first waits for its browser, so each one waits for the one before it.
    const port = portOf(request.redirectUrl);
    const previous = signIns.get(port) ?? Promise.resolve();
    const mine = previous.then(() => listenOnce(request, show, open));
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    signIns.set(port, settled);
    void settled.then(() => {
      if (signIns.get(port) === settled) signIns.delete(port);
    });
    return mine;
  };
}

/** The sign-in last queued on each redirect port, settled when its listener is closed. */
const signIns = new Map<string, Promise<void>>();

function portOf(redirectUrl: string): string {
  try {
    const url = new URL(redirectUrl);
    return `${url.hostname}:${url.port || '80'}`;
  } catch {
    return redirectUrl;
  }
}

function listenOnce(
  { server, authorizationUrl, redirectUrl }: Parameters<McpAuthorize>[0],
  show: (message: string) => void,
  open: (url: string) => void,
): Promise<{ code: string; state?: string }> {
  return new Promise((resolve, reject) => {
    const redirect = new URL(redirectUrl);
    if (redirect.hostname !== '127.0.0.1' && redirect.hostname !== 'localhost') {
      reject(new Error(`the OAuth redirect URL ${redirectUrl} is not on this machine; use a loopback redirect (http://127.0.0.1:<port>/callback)`));
      return;
    }
    const listener = createServer((request, response) => {
      const url = new URL(request.url ?? '/', redirectUrl);
      if (url.pathname !== redirect.pathname) {
        response.writeHead(404).end();
        return;
      }
      const code = url.searchParams.get('code');
      const state = url.searchParams.get('state');
      const failure = url.searchParams.get('error');
      // No keep-alive: a browser reusing this connection would bring the next sign-in's redirect here.
      response.writeHead(code ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      response.end(code ? `Tessera: signed in to ${server}. You can close this tab.` : `Tessera: sign-in to ${server} failed (${failure ?? 'no code'}).`);
      finish(code ? undefined : new Error(`the authorization server answered ${failure ?? 'without a code'}`), code ? { code, ...(state ? { state } : {}) } : undefined);
    });
    const timer = setTimeout(() => finish(new Error(`no sign-in for ${server} within 5 minutes`)), AUTHORIZE_TIMEOUT_MS);
    timer.unref();
    const finish = (error: Error | undefined, value?: { code: string; state?: string }): void => {
      clearTimeout(timer);
      listener.close();
      listener.closeAllConnections();
      if (error) reject(error);
      else resolve(value!);
    };
    listener.on('error', (error) => finish(new Error(`cannot listen on ${redirectUrl} for the OAuth redirect: ${describeError(error)}`)));
    listener.listen(Number(redirect.port || 80), redirect.hostname, () => {
      show(`MCP server "${server}" needs you to sign in: ${authorizationUrl.href}`);
      open(authorizationUrl.href);
    });
  });
}

function openInBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  void import('node:child_process').then(({ spawn }) => {
    try {
      const child = spawn(command, [url], { stdio: 'ignore', detached: true });
      child.on('error', () => undefined);
      child.unref();
    } catch {
      // No opener: the URL was shown.
    }
  });
}

/**
 * The preset's `mcp` option for a run: flags, `~/.claude.json`, the approval keys of the merged
 * settings. With `--setting-sources`, servers of a scope left out are not read: `user` and
 * `local` are `~/.claude.json`'s, `project` is `.mcp.json`.
 */
export function cliMcpOptions(options: {
  flags: CliFlags;
  home: string;
  cwd: string;
  settings: Readonly<Record<string, unknown>>;
  settingSources?: readonly string[] | undefined;
  show: (message: string) => void;
}): { mcp: NonNullable<CliPresetOptions['mcp']>; warnings: string[] } {
  const { flags, home, cwd, settings, show } = options;
  const reads = (scope: string): boolean => options.settingSources === undefined || options.settingSources.includes(scope);
  const read: ClaudeJsonServers = flags.strictMcpConfig || (!reads('user') && !reads('local')) ? { warnings: [] } : readClaudeJsonServers(home, cwd);
  const claude: ClaudeJsonServers = { ...(reads('user') && read.user ? { user: read.user } : {}), ...(reads('local') && read.local ? { local: read.local } : {}), warnings: read.warnings };
  const approval: McpProjectApprovalSettings = {
    ...(typeof settings.enableAllProjectMcpServers === 'boolean' ? { enableAllProjectMcpServers: settings.enableAllProjectMcpServers } : {}),
    ...(Array.isArray(settings.enabledMcpjsonServers) ? { enabledMcpjsonServers: settings.enabledMcpjsonServers.filter((name): name is string => typeof name === 'string') } : {}),
    ...(Array.isArray(settings.disabledMcpjsonServers) ? { disabledMcpjsonServers: settings.disabledMcpjsonServers.filter((name): name is string => typeof name === 'string') } : {}),
  };
  return {
    mcp: {
      ...(flags.mcpConfig.length > 0 ? { configs: flags.mcpConfig } : {}),
      ...(flags.strictMcpConfig ? { strict: true } : {}),
      ...(reads('project') ? {} : { projectConfig: false }),
      ...(claude.user ? { userServers: claude.user } : {}),
      ...(claude.local ? { localServers: claude.local } : {}),
      approval,
      authorize: loopbackAuthorize(show),
      // Problems are shown; a server's own stderr (info) stays out of the terminal.
      log: (entry) => {
        if (entry.severity !== 'info') show(`${entry.severity === 'error' ? 'MCP error' : 'MCP warning'}: ${entry.message}`);
      },
    },
    warnings: claude.warnings,
  };
}
