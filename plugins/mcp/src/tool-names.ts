import { createHash } from 'node:crypto';

/** The longest tool name offered to providers (OpenAI's function-name limit; Anthropic allows 128). */
export const MAX_TOOL_NAME_LENGTH = 64;

/**
 * A server segment with every character outside `[A-Za-z0-9_-]` replaced by `_`. Runs of
 * underscores collapse to one so a segment never contains the `__` separator: permission rules
 * (`mcp__server`, `mcp__server__*`) split names on it.
 */
export function sanitizeSegment(text: string): string {
  // No leading or trailing `_` either: `mcp___x` or `mcp__x___tool` would blur the separator too.
  const cleaned = text.replace(/[^A-Za-z0-9_-]/g, '_').replace(/_{2,}/g, '_').replace(/^_+|_+$/g, '');
  return cleaned === '' ? 'server' : cleaned;
}

/** The tool-name prefix of a server: `mcp__<server>` or, for a bundle plugin's server, `mcp__plugin_<plugin>_<server>`. */
export function serverPrefix(server: string, plugin?: string): string {
  return plugin === undefined ? `mcp__${sanitizeSegment(server)}` : `mcp__${sanitizeSegment(`plugin_${plugin}_${server}`)}`;
}

function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * `<prefix>__<tool>`, sanitised and capped at 64 characters. A name that is too long keeps its
 * start and ends with `_` and an 8-character hash of the full name, so it stays stable across
 * runs and distinct from its neighbours.
 */
export function mcpToolName(prefix: string, tool: string): string {
  const full = `${prefix}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (full.length <= MAX_TOOL_NAME_LENGTH) return full;
  const hash = shortHash(full);
  return `${full.slice(0, MAX_TOOL_NAME_LENGTH - hash.length - 1)}_${hash}`;
}

/**
 * Names for a server's tools, in the server's order. Two raw names that sanitise to one
 * (`a.b` and `a_b`) are told apart deterministically: the raw names are sorted, the first keeps
 * the plain name and each later one gets a hash of its raw name — so the outcome does not depend
 * on the order the server lists them in.
 */
export function assignToolNames(prefix: string, tools: readonly string[], taken: ReadonlySet<string> = new Set()): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set(taken);
  for (const raw of [...new Set(tools)].sort()) {
    let name = mcpToolName(prefix, raw);
    if (used.has(name)) {
      const hash = shortHash(`${prefix}\u0000${raw}`);
      const base = name.length + hash.length + 1 > MAX_TOOL_NAME_LENGTH ? name.slice(0, MAX_TOOL_NAME_LENGTH - hash.length - 1) : name;
      name = `${base}_${hash}`;
      for (let counter = 2; used.has(name); counter += 1) name = `${base.slice(0, MAX_TOOL_NAME_LENGTH - hash.length - 1 - String(counter).length)}_${hash}${counter}`;
    }
    used.add(name);
    names.set(raw, name);
  }
  return names;
}

/**
 * Unique prefixes for servers whose names sanitise alike (`my.server` and `my_server`): sorted
 * by raw name, the first keeps the plain prefix, later ones get a hash suffix.
 */
export function assignServerPrefixes(servers: ReadonlyArray<{ name: string; plugin?: string }>): Map<string, string> {
  const key = (server: { name: string; plugin?: string }) => (server.plugin === undefined ? server.name : `${server.plugin}/${server.name}`);
  const prefixes = new Map<string, string>();
  const used = new Set<string>();
  for (const server of [...servers].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))) {
    let prefix = serverPrefix(server.name, server.plugin);
    if (used.has(prefix)) prefix = `${prefix}-${shortHash(key(server), 6)}`;
    used.add(prefix);
    prefixes.set(key(server), prefix);
  }
  return prefixes;
}

/** The key `assignServerPrefixes` uses for a server. */
export function serverKey(server: { name: string; plugin?: string }): string {
  return server.plugin === undefined ? server.name : `${server.plugin}/${server.name}`;
}
