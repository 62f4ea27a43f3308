import { describe, expect, it } from 'vitest';
import { expandSpec, expandString } from './expand-env.js';
import { McpError } from './mcp-errors.js';

const env = { HOST: 'example.com', EMPTY: '', TOKEN: 't0k' };

describe('environment expansion', () => {
  it('expands ${VAR} and ${VAR:-default}', () => {
    expect(expandString('https://${HOST}/mcp', env, 's', 'url')).toBe('https://example.com/mcp');
    expect(expandString('${PORT:-8080}', env, 's', 'url')).toBe('8080');
    expect(expandString('${EMPTY:-fallback}', env, 's', 'url')).toBe('fallback');
    expect(expandString('${EMPTY}', env, 's', 'url')).toBe('');
    expect(expandString('$HOST and {HOST}', env, 's', 'url')).toBe('$HOST and {HOST}');
  });

  it('expands every field of a spec but headersHelper, which the shell expands', () => {
    expect(expandSpec({ type: 'stdio', command: '${HOST}', args: ['--t=${TOKEN}'], env: { K: '${TOKEN}' }, cwd: '/${HOST}' }, env, 's')).toEqual({ type: 'stdio', command: 'example.com', args: ['--t=t0k'], env: { K: 't0k' }, cwd: '/example.com' });
    expect(expandSpec({ type: 'http', url: 'https://${HOST}', headers: { Authorization: 'Bearer ${TOKEN}' }, headersHelper: 'get ${HOST}' }, env, 's')).toEqual({ type: 'http', url: 'https://example.com', headers: { Authorization: 'Bearer t0k' }, headersHelper: 'get ${HOST}' });
  });

  it('names the server, field, file and variable when one is missing', () => {
    let error: unknown;
    try {
      expandSpec({ type: 'http', url: 'https://x', headers: { Authorization: 'Bearer ${API_KEY}' } }, env, 'github', '/p/.mcp.json');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toBe('MCP server "github" (declared in /p/.mcp.json): headers.Authorization uses ${API_KEY}, but API_KEY is not set. Set it in the environment, or write ${API_KEY:-default} to give it a default.');
    expect((error as McpError).toJSON()).toMatchObject({ code: 'mcp_env_missing', category: 'configuration', recoverable: false, details: { server: 'github', field: 'headers.Authorization', variable: 'API_KEY' } });
  });
});
