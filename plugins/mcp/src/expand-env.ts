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

/**
 * A server spec with every `${VAR}` in command, args, env, cwd, url and headers expanded.
 * `headersHelper` is left as written, as Claude Code does: the shell expands its variables from
 * the environment it runs in, and a failure can then quote it without showing a secret.
 */
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
    ...(spec.headersHelper === undefined ? {} : { headersHelper: spec.headersHelper }),
  };
}

/** `${VAR}`, and in the shell command `headersHelper` also `$VAR`. */
const SHELL_REFERENCE = /\$\{?([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Replaces the values of the variables a spec refers to with `${NAME}` in a text, so an error
 * message or a diagnostic never shows a secret the configuration only named. Values shorter
 * than four characters are left alone: they would turn ordinary words into references.
 */
export function redactor(spec: McpServerSpec, env: NodeJS.ProcessEnv): (text: string) => string {
  const names = new Set<string>();
  const written = spec.type === 'stdio' ? [spec.command, ...spec.args, ...Object.values(spec.env), spec.cwd ?? ''] : [spec.url, ...Object.values(spec.headers)];
  for (const text of written) for (const match of text.matchAll(REFERENCE)) names.add(match[1]!);
  if (spec.type !== 'stdio') for (const match of (spec.headersHelper ?? '').matchAll(SHELL_REFERENCE)) names.add(match[1]!);
  const secrets = [...names]
    .flatMap((name): Array<[string, string]> => {
      const value = env[name];
      return value !== undefined && value.length >= 4 ? [[value, `\${${name}}`]] : [];
    })
    .sort((a, b) => b[0].length - a[0].length);
  return (text) => secrets.reduce((out, [value, name]) => out.split(value).join(name), text);
}
