import type { McpServerSpec } from '@tessera/contracts';
import { McpError } from './mcp-errors.js';

/** Where a value sits, for messages: `env.API_KEY`, `args[2]`, `headers.Authorization`. */
type Field = string;

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${VAR}` and `${VAR:-default}` in one string. A variable that is unset (or empty, for
 * the `:-` form) takes its default; one that is unset with no default is a configuration error
 * naming the server, the field and the variable.
 */
export function expandString(text: string, env: NodeJS.ProcessEnv, server: string, field: Field, file?: string): string {
  return text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && (fallback === undefined || value !== '')) return value;
    if (fallback !== undefined) return fallback;
    const where = file === undefined ? '' : ` (declared in ${file})`;
    throw new McpError(
      'mcp_env_missing',
      server,
      `MCP server "${server}"${where}: ${field} uses \${${name}}, but ${name} is not set. Set it in the environment, or write \${${name}:-default} to give it a default.`,
      { field, variable: name, ...(file === undefined ? {} : { file }) },
    );
  });
}

function expandMap(map: Record<string, string>, env: NodeJS.ProcessEnv, server: string, field: Field, file?: string): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([key, value]) => [key, expandString(value, env, server, `${field}.${key}`, file)]));
}

/** A server spec with every `${VAR}` in command, args, env, cwd, url, headers and headersHelper expanded. */
export function expandSpec(spec: McpServerSpec, env: NodeJS.ProcessEnv, server: string, file?: string): McpServerSpec {
  if (spec.type === 'stdio') {
    return {
      type: 'stdio',
      command: expandString(spec.command, env, server, 'command', file),
      args: spec.args.map((arg, index) => expandString(arg, env, server, `args[${index}]`, file)),
      env: expandMap(spec.env, env, server, 'env', file),
      ...(spec.cwd === undefined ? {} : { cwd: expandString(spec.cwd, env, server, 'cwd', file) }),
    };
  }
  return {
    type: spec.type,
    url: expandString(spec.url, env, server, 'url', file),
    headers: expandMap(spec.headers, env, server, 'headers', file),
    ...(spec.headersHelper === undefined ? {} : { headersHelper: expandString(spec.headersHelper, env, server, 'headersHelper', file) }),
  };
}
