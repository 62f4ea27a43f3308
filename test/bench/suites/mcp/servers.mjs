// Helpers for the MCP bench: where the registry servers live, and a raw SDK client to compare with.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT } from '../../lib/common.mjs';

const require = createRequire(join(REPO_ROOT, 'plugins', 'mcp', 'package.json'));

/** The bin file of server-everything, run with this Node (never npx). */
export function everythingBin() {
  const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json');
  return join(dirname(manifest), require(manifest).bin['mcp-server-everything']);
}

/** A raw SDK client on a fresh server-everything: connected and tools listed. Returns the client and the ms it took. */
export async function rawStart(bin) {
  const started = performance.now();
  const client = new Client({ name: 'bench-raw', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin], env: getDefaultEnvironment(), stderr: 'pipe' }));
  await client.listTools();
  return { client, ms: performance.now() - started };
}
