import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startMcpHost, textOf, type McpHost } from './mcp-server.test-helper.js';
import type { PromptOutput } from './mcp-tool-schemas.js';

let host: McpHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

/** A client connected in-process: both sides of a call run in the same tick, so calls sent together interleave as closely as they can. */
async function inMemoryClient(current: McpHost): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await current.mcp.connect(serverSide);
  const client = new Client({ name: 'in-memory', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('McpConnection: sessions held by the tool call using them', () => {
  it('a call that starts a session never ends the one a concurrent call has just found (maxSessionsPerConnection 1)', async () => {
    host = await startMcpHost({ turns: () => ({ text: 'Answered.' }), transport: { maxSessionsPerConnection: 1 } });
    const client = await inMemoryClient(host);
    const first = (await client.callTool({ name: 'prompt', arguments: { prompt: 'one' } })).structuredContent as PromptOutput;
    // Sent together: the continuation finds the session, then the new-session call looks for room before the continuation's turn starts.
    const [continued, started] = await Promise.all([
      client.callTool({ name: 'prompt', arguments: { prompt: 'two', sessionId: first.sessionId } }),
      client.callTool({ name: 'prompt', arguments: { prompt: 'three' } }),
    ]);
    expect(continued.isError).toBeFalsy();
    expect(continued.structuredContent).toMatchObject({ sessionId: first.sessionId, response: 'Answered.', stopReason: 'completed' });
    // The only session was held by the continuation: the new one is refused, not given its room.
    expect(started.isError).toBe(true);
    expect(textOf(started)).toContain('holds 1 sessions (at most 1)');
    expect(host.opened).toHaveLength(1);
  });

  it('two calls that start sessions at the same moment never both take the last room', async () => {
    host = await startMcpHost({ turns: () => ({ text: 'Answered.' }), transport: { maxSessionsPerConnection: 1 } });
    const client = await inMemoryClient(host);
    const results = await Promise.all([client.callTool({ name: 'prompt', arguments: { prompt: 'one' } }), client.callTool({ name: 'prompt', arguments: { prompt: 'two' } })]);
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    expect(textOf(results.find((result) => result.isError)!)).toContain('(at most 1)');
    expect(host.opened).toHaveLength(1);
  });
});
