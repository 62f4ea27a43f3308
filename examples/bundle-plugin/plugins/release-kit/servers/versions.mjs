#!/usr/bin/env node
// The plugin's MCP server, over stdio: `next_version` computes a semantic-versioning bump.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'versions', version: '0.1.0' });

server.registerTool(
  'next_version',
  {
    description: 'The next semantic version after `current` for a change of the given kind.',
    inputSchema: { current: z.string().regex(/^\d+\.\d+\.\d+$/).describe('e.g. 1.4.2'), change: z.enum(['major', 'minor', 'patch']) },
  },
  async ({ current, change }) => {
    const [major, minor, patch] = current.split('.').map(Number);
    const next = change === 'major' ? `${major + 1}.0.0` : change === 'minor' ? `${major}.${minor + 1}.0` : `${major}.${minor}.${patch + 1}`;
    return { content: [{ type: 'text', text: next }] };
  },
);

await server.connect(new StdioServerTransport());
