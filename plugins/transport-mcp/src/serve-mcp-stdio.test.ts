import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { SessionStore } from '@tessera/contracts';
import { InteractiveSession } from '@tessera/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { startMcpHost, StreamClientTransport, textOf, type McpHost } from './mcp-server.test-helper.js';
import type { PromptOutput } from './mcp-tool-schemas.js';

let host: McpHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

describe('the MCP server transport over stdio', () => {
  it('serves one client and continues a session the host attached, which stays the host’s when stdin ends', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    host = await startMcpHost({ turns: [{ text: 'Attached and answering.' }, { text: 'Still the host’s.' }], transport: { stdio: { stdin, stdout } } });
    const attached = new InteractiveSession({ kernel: host.kernel, cwd: host.dir });
    await attached.whenReady();
    host.mcp.attach(attached);
    expect(host.mcp.name).toBe('mcp');
    await host.mcp.start();
    const client = new Client({ name: 'stdio-client', version: '1.0.0' });
    await client.connect(new StreamClientTransport(stdout, stdin));
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'hello', sessionId: attached.getSessionId() } });
    expect((result.structuredContent as PromptOutput).response).toBe('Attached and answering.');
    expect(textOf(result)).toContain(`Session: ${attached.getSessionId()}`);
    stdin.end();
    await host.mcp.whenStdioClosed();
    const stored = await host.kernel.get(SessionStore).load(attached.getSessionId());
    expect(stored?.messages.length).toBeGreaterThan(0);
    // The session stays the host's (ITransportAdapter.attach): the client leaving does not end it.
    expect((await attached.submit('again'))!.response).toBe('Still the host’s.');
    await attached.shutdown();
  });

  it('asks once for "allow for the rest of this session" and remembers it', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    host = await startMcpHost({
      turns: [
        { toolCalls: [{ name: 'Bash', input: { command: 'echo one', description: 'Echo' } }] },
        { toolCalls: [{ name: 'Bash', input: { command: 'echo one', description: 'Echo' } }] },
        { text: 'Twice.' },
      ],
      transport: { stdio: { stdin, stdout } },
    });
    await host.mcp.start();
    const client = new Client({ name: 'stdio-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked += 1;
      return { action: 'accept', content: { decision: 'allow_session' } };
    });
    await client.connect(new StreamClientTransport(stdout, stdin));
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'echo twice' } });
    expect((result.structuredContent as PromptOutput).toolCalls.map((call) => call.status)).toEqual(['success', 'success']);
    expect(asked).toBe(1);
    await client.close();
    await host.mcp.whenStdioClosed();
  });

  it('refuses the call when the user declines the prompt', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    host = await startMcpHost({
      turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'echo no', description: 'Echo' } }] }, { text: 'Fine.' }],
      transport: { stdio: { stdin, stdout } },
    });
    await host.mcp.start();
    const client = new Client({ name: 'stdio-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' }));
    await client.connect(new StreamClientTransport(stdout, stdin));
    const result = await client.callTool({ name: 'prompt', arguments: { prompt: 'echo' } });
    expect((result.structuredContent as PromptOutput).toolCalls[0]!.status).toBe('denied');
    const told = JSON.stringify(host.provider.requests.at(-1)!.messages.at(-1)!.content);
    expect(told).toContain('The user declined the permission prompt for Bash.');
    await client.close();
  });
});
