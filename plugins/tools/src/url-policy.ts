import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which destinations WebFetch refuses by address, after resolving the host name:
 * - `link-local` (default): 169.254.0.0/16 and fe80::/10, where cloud metadata services
 *   (169.254.169.254) hand out credentials;
 * - `private`: also loopback, RFC 1918, carrier-grade NAT, unique-local, multicast and
 *   reserved ranges — for agents that run on a server and must only reach the public web;
 * - `none`: no address check.
 */
export type AddressPolicy = 'link-local' | 'private' | 'none';

/** Resolves a host name to every address it has. */
export type HostResolver = (hostname: string) => Promise<string[]>;

export const resolveHost: HostResolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

function blockList(subnets: Array<[string, number, 'ipv4' | 'ipv6']>): BlockList {
  const list = new BlockList();
  for (const [network, prefix, type] of subnets) list.addSubnet(network, prefix, type);
  return list;
}

const LINK_LOCAL = blockList([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);

const PRIVATE = blockList([
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
]);

/** `[::1]` → `::1`; IPv4-mapped IPv6 (`::ffff:10.0.0.1`) → the IPv4 address. */
function plainAddress(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  return mapped ? mapped[1]! : bare;
}

/** Why `address` is refused under `policy`, or undefined when it is allowed. */
export function blockedAddress(address: string, policy: AddressPolicy): string | undefined {
  if (policy === 'none') return undefined;
  const plain = plainAddress(address);
  const family = isIP(plain);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (LINK_LOCAL.check(plain, type)) return `${plain} is a link-local address (cloud metadata services live there)`;
  if (policy === 'private' && PRIVATE.check(plain, type)) return `${plain} is a private, loopback or reserved address`;
  return undefined;
}

/** Whether `hostname` (as `URL.hostname` gives it) names this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = plainAddress(hostname.toLowerCase());
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** `http:` URLs become `https:`, except for this machine (local servers rarely have certificates). */
export function upgradedToHttps(url: URL): URL {
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return url;
  const upgraded = new URL(url);
  upgraded.protocol = 'https:';
  // An explicit :80 would now be taken literally; the default https port is meant.
  if (upgraded.port === '80') upgraded.port = '';
  return upgraded;
}

/**
 * Refuses a URL whose host is, or resolves to, an address `policy` blocks. A host name that
 * resolves to several addresses is refused if any of them is blocked. The check runs before
 * the request; a DNS answer that changes between the check and the connection (rebinding) is
 * not caught here, which is why `private` also belongs at the network layer of a server.
 */
export async function addressRefusal(url: URL, policy: AddressPolicy, resolve: HostResolver): Promise<string | undefined> {
  if (policy === 'none') return undefined;
  const host = plainAddress(url.hostname);
  if (isIP(host) !== 0) return blockedAddress(host, policy);
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return undefined; // unresolvable: the request itself fails with the resolver's message
  }
  for (const address of addresses) {
    const reason = blockedAddress(address, policy);
    if (reason) return `${host} resolves to ${reason}`;
  }
  return undefined;
}
