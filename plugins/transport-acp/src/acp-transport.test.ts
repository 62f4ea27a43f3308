import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { createKernel, InteractiveSession } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { ApprovalRouter } from '@tessera/session-hub';
import { describe, expect, it } from 'vitest';
import { acpTransport } from './acp-transport.js';
import { startAcpHarness } from './acp.test-helper.js';

describe('acpTransport (ITransportAdapter)', () => {
  it('offers an attached session under its id and leaves it running when stopped', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'first answer' }, { text: 'from the editor' }, { text: 'after stop' }] }) });
    const session = new InteractiveSession({ kernel, cwd: '/work' });
    await session.whenReady();
    await session.submit('first question');

    const toAgent = new PassThrough();
    const fromAgent = new PassThrough();
    const sessions = { open: () => Promise.reject(new Error('not used')), list: () => InteractiveSession.listResumableSessions(kernel) };
    const transport = acpTransport({ sessions, approvals: new ApprovalRouter(), input: toAgent, output: fromAgent });
    expect(transport.name).toBe('acp');
    session.attachTransport(transport);
    await transport.start();

    const updates: acp.SessionNotification[] = [];
    const client = acp
      .client()
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
      .connect(acp.ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>));
    await client.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
    const sessionId = session.getSessionId();
    await client.agent.request(acp.methods.agent.session.load, { sessionId, cwd: '/work', mcpServers: [] });
    expect(updates.map((note) => note.update.sessionUpdate).slice(0, 2)).toEqual(['user_message_chunk', 'agent_message_chunk']);

    const { stopReason } = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(stopReason).toBe('end_turn');
    expect(updates.at(-1)?.update).toMatchObject({ sessionUpdate: 'agent_message_chunk', content: { text: 'from the editor' } });

    client.close();
    await transport.stop();
    expect((await session.submit('still open?'))?.response).toBe('after stop');
    await session.shutdown();
    await kernel.shutdown();
  });

  it('shuts down the sessions of a client that went away (its input ended), stopping their turns', async () => {
    const h = await startAcpHarness({ turns: () => [{ text: Array.from({ length: 400 }, (_, index) => `w${index} `), delayMs: 10 }] });
    const opened: InteractiveSession[] = [];
    const open = h.sessions.open;
    const sessions = {
      ...h.sessions,
      async open(request: Parameters<typeof open>[0]) {
        const session = await open(request);
        opened.push(session);
        return session;
      },
    };
    const toAgent = new PassThrough();
    const fromAgent = new PassThrough();
    const transport = acpTransport({ sessions, approvals: h.approvals, input: toAgent, output: fromAgent });
    await transport.start();
    const client = acp
      .client()
      .onNotification(acp.methods.client.session.update, () => undefined)
      .connect(acp.ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>));
    await client.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
    const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd: h.dir, mcpServers: [] });
    void client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'talk' }] }).catch(() => undefined);
    await h.waitFor(() => opened[0]?.isExecuting() === true, 'the turn');

    toAgent.end(); // the editor quit
    await transport.closed;
    expect(opened[0]!.isExecuting()).toBe(false);
    await expect(opened[0]!.submit('anyone there?')).rejects.toThrow(/shut|closed/i);
    // The host stopping it later (as `tessera acp` closes its server after `closed`) is harmless.
    await transport.stop();
    await transport.stop();
    await h.close();
  });
});
