/** Host names a server bound to the loopback interface answers to (any port). */
export const LOCALHOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

export interface HostValidationOptions {
  /** Host names (without port) the `Host` header may carry; default `LOCALHOST_NAMES`. `'*'` accepts any. */
  allowedHosts?: readonly string[];
  /**
   * Origins (`scheme://host[:port]`) a browser request may come from, besides http(s) origins
   * on an allowed host name. `'*'` accepts any.
   */
  allowedOrigins?: readonly string[];
}

/** `localhost:3000` → `localhost`, `[::1]:3000` → `[::1]`; lower case. */
function hostnameOf(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colon = value.indexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

/**
 * DNS-rebinding protection for a server on localhost: a web page on another site can make a
 * browser send requests to `localhost` under its own host name, or with its own `Origin`.
 * Returns why the request is refused, or undefined when it may go on.
 */
export function checkHostAndOrigin(request: Request, options: HostValidationOptions = {}): string | undefined {
  const hosts = options.allowedHosts ?? LOCALHOST_NAMES;
  const host = request.headers.get('host') ?? new URL(request.url).host;
  if (!hosts.includes('*') && !hosts.includes(hostnameOf(host))) return `Host "${host}" is not allowed; this server answers to ${hosts.join(', ')}.`;
  const origin = request.headers.get('origin');
  // Clients that are not browsers send no Origin.
  if (origin === null) return undefined;
  const origins = options.allowedOrigins ?? [];
  if (origins.includes('*') || origins.includes(origin)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return `Origin "${origin}" is not allowed.`;
  }
  const sameHost = (parsed.protocol === 'http:' || parsed.protocol === 'https:') && (hosts.includes('*') || hosts.includes(hostnameOf(parsed.host)));
  return sameHost ? undefined : `Origin "${origin}" is not allowed; add it to allowedOrigins to accept requests from it.`;
}
