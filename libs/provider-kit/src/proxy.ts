import { request as httpRequest, type Agent, type ClientRequest, type RequestOptions } from 'node:http';
import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import { isIP } from 'node:net';
import { HttpConnectionError } from './http-connection-error.js';

/**
 * Outgoing calls through an HTTP proxy, as Claude Code and Node's own fetch read it from the
 * environment: `https_proxy` / `HTTPS_PROXY` for `https:` targets (falling back to the HTTP
 * proxy), `http_proxy` / `HTTP_PROXY` for both, lower-case names first; `no_proxy` /
 * `NO_PROXY` lists hosts reached directly. An `https:` target is reached through a `CONNECT`
 * tunnel (TLS end to end, the proxy sees only the host name); an `http:` target is sent to the
 * proxy in absolute form. Credentials in the proxy URL go out as `Proxy-Authorization: Basic`
 * and never appear in a message.
 */

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * True when `noProxy` says to reach `target` directly. Entries are separated by commas or
 * white space: `*` (every host), a host name or IP (itself and, for a name, its subdomains), a
 * name with a leading `.` or `*.` (the domain and its subdomains), each optionally with
 * `:port` (that port only). Case does not matter; IPv6 may be written with or without brackets.
 */
export function bypassesProxy(target: URL, noProxy: string): boolean {
  const host = bare(target.hostname.toLowerCase());
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  for (const raw of noProxy.split(/[\s,]+/)) {
    if (raw === '') continue;
    if (raw === '*') return true;
    const { name, port: only } = splitEntry(raw.toLowerCase());
    if (only !== undefined && only !== port) continue;
    const domain = name.replace(/^\*?\./, '');
    if (domain === '') continue;
    if (host === domain || (isIP(host) === 0 && host.endsWith(`.${domain}`))) return true;
  }
  return false;
}

function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (several colons, no port). */
function splitEntry(entry: string): { name: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1] as string, ...(bracketed[2] === undefined ? {} : { port: Number(bracketed[2]) }) };
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (withPort) return { name: withPort[1] as string, port: Number(withPort[2]) };
  return { name: entry };
}

/**
 * The proxy to send a call to `target` through, or undefined to connect directly (no proxy
 * variable is set, or `NO_PROXY` names the host). Throws `HttpConnectionError` (`connect`)
 * naming the variable when its value is not an `http:` or `https:` URL.
 */
export function proxyFor(target: URL, env: Environment = process.env): URL | undefined {
  const secure = target.protocol === 'https:';
  const pick = (lower: string, upper: string): { name: string; value: string } | undefined => {
    if (env[lower]) return { name: lower, value: env[lower] as string };
    if (env[upper]) return { name: upper, value: env[upper] as string };
    return undefined;
  };
  const chosen = (secure ? pick('https_proxy', 'HTTPS_PROXY') : undefined) ?? pick('http_proxy', 'HTTP_PROXY');
  if (chosen === undefined) return undefined;
  if (bypassesProxy(target, env.no_proxy ?? env.NO_PROXY ?? '')) return undefined;
  let proxy: URL;
  try {
    proxy = new URL(chosen.value.includes('://') ? chosen.value : `http://${chosen.value}`);
  } catch {
    throw new HttpConnectionError(`${chosen.name} is not a URL; set it to the proxy's address, e.g. http://proxy.example:3128.`, 'connect');
  }
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') {
    throw new HttpConnectionError(`${chosen.name} names a ${proxy.protocol} proxy; only http: and https: proxies are supported.`, 'connect');
  }
  return proxy;
}

/** The proxy's address without its credentials, for messages. */
export function describeProxy(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`;
}

function proxyAuthorization(proxy: URL): Record<string, string> {
  if (proxy.username === '' && proxy.password === '') return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { 'proxy-authorization': `Basic ${Buffer.from(credentials).toString('base64')}` };
}

function proxyPort(proxy: URL): number {
  return Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
}

/** `host:port` for a request line or a Host header (an IPv6 address in brackets). */
function authority(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

type RequestFunction = typeof httpRequest;

/**
 * A request for `target` through `proxy`, with the options a direct request would have (TLS
 * options such as `ca` apply to the target, over the tunnel). The caller writes the body and
 * reads the answer as for a direct request.
 */
export async function requestThroughProxy(target: URL, proxy: URL, options: HttpsRequestOptions): Promise<ClientRequest> {
  if (target.protocol === 'https:') {
    return (await import('node:https')).request(target, { ...options, agent: await tunnelAgent(proxy) });
  }
  // Plain HTTP: the whole URL as the request target; the proxy connects on.
  const toProxy: RequestFunction = proxy.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return toProxy({
    ...options,
    host: bare(proxy.hostname),
    port: proxyPort(proxy),
    path: target.href,
    headers: { ...options.headers, host: target.host, ...proxyAuthorization(proxy) },
  });
}

const TLS_OPTION_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'checkServerIdentity', 'minVersion', 'maxVersion', 'ciphers', 'ecdhCurve', 'secureOptions', 'ALPNProtocols'] as const;

/** One keep-alive tunnel agent per proxy (its connections are pooled per target host). */
const tunnelAgents = new Map<string, Promise<Agent>>();

function tunnelAgent(proxy: URL): Promise<Agent> {
  let agent = tunnelAgents.get(proxy.href);
  if (agent === undefined) {
    agent = makeTunnelAgent(proxy);
    tunnelAgents.set(proxy.href, agent);
  }
  return agent;
}

async function makeTunnelAgent(proxy: URL): Promise<Agent> {
  const [https, tls] = await Promise.all([import('node:https'), import('node:tls')]);
  const toProxy: RequestFunction = proxy.protocol === 'https:' ? https.request : httpRequest;
  const where = describeProxy(proxy);
  type Callback = (error: Error | null, stream: import('node:stream').Duplex) => void;
  class ProxyTunnelAgent extends https.Agent {
    // The connection a pooled request gets: a CONNECT tunnel through the proxy, then TLS to the
    // target over it (the certificate is checked against the target's name, as directly).
    override createConnection(options: RequestOptions & { servername?: string }, callback?: Callback): undefined {
      // Node's agent always passes a callback to an agent that connects asynchronously.
      const done = callback as Callback;
      const host = bare(String(options.host ?? 'localhost'));
      const port = Number(options.port ?? 443);
      const target = authority(host, port);
      const connect = toProxy({
        host: bare(proxy.hostname),
        port: proxyPort(proxy),
        method: 'CONNECT',
        path: target,
        headers: { host: target, ...proxyAuthorization(proxy) },
        agent: false,
      });
      let settled = false;
      const fail = (message: string, cause?: unknown): void => {
        if (settled) return;
        settled = true;
        done(new Error(message, cause === undefined ? undefined : { cause }), undefined as never);
      };
      // Node reports every answer to a CONNECT here, whatever its status.
      connect.once('connect', (response, socket) => {
        if (response.statusCode !== 200) {
          socket.destroy();
          fail(`The proxy ${where} refused the tunnel to ${target}: ${response.statusCode} ${response.statusMessage ?? ''}`.trim() + (response.statusCode === 407 ? ' (put the credentials in the proxy URL: http://user:password@host:port).' : '.'));
          return;
        }
        settled = true;
        const tlsOptions: import('node:tls').ConnectionOptions = { socket, servername: options.servername ?? (isIP(host) === 0 ? host : undefined) };
        // The request's own TLS settings (a CA, client certificate, …) still apply over the tunnel.
        for (const key of TLS_OPTION_KEYS) if ((options as Record<string, unknown>)[key] !== undefined) (tlsOptions as Record<string, unknown>)[key] = (options as Record<string, unknown>)[key];
        const secure = tls.connect(tlsOptions);
        done(null, secure);
      });
      connect.once('error', (error) => fail(`Could not reach the proxy ${where}: ${error.message}`, error));
      connect.end();
      return undefined;
    }
  }
  return new ProxyTunnelAgent({ keepAlive: true });
}
