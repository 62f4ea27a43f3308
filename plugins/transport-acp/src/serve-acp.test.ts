import { PassThrough, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { ApprovalRouter } from '@tessera/session-hub';
import { describe, expect, it } from 'vitest';
import { serveAcp } from './serve-acp.js';

describe('serveAcp', () => {
  it('closes the connection when a Node output fails (EPIPE) instead of leaving the stream error unhandled', async () => {
    // An editor that stopped reading: every write fails, and Node also emits 'error' on the stream.
    const output = new Writable({ write: (_chunk, _encoding, done) => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) });
    // An 'error' emitted with no listener ends the process; recorded here so the test can say so.
    const unhandled: unknown[] = [];
    const emit = output.emit.bind(output);
    output.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event !== 'error' || output.listenerCount('error') > 0) return emit(event, ...args);
      unhandled.push(args[0]);
      return false;
    }) as typeof output.emit;
    const logged: string[] = [];
    const input = new PassThrough();
    const server = serveAcp({ sessions: { open: () => Promise.reject(new Error('not used')), list: async () => [] }, approvals: new ApprovalRouter(), input, output, log: (line) => void logged.push(line) });

    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: acp.methods.agent.initialize, params: { protocolVersion: acp.PROTOCOL_VERSION } })}\n`);
    await server.closed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    expect(logged.join('\n')).toContain('EPIPE');
    // The listener goes with the connection: the output outlives it (stdout).
    expect(output.listenerCount('error')).toBe(0);
    await server.close();
  });
});
