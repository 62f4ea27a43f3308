import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashToken } from '@tessera/plugin-transport-http';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore, TransportContribution } from '@tessera/contracts';
import { createKernel, InteractiveSession } from '@tessera/kernel';
import type { HttpTransport } from '@tessera/plugin-transport-http';
import { ApprovalRouter, type HostedTransport } from '@tessera/session-hub';
import { createTesseraServer, serverPreset } from './index.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('serverPreset / createTesseraServer', () => {
  it('serverPreset routes permission asks: its ApprovalHandler is the router', async () => {
    const { plugins, approvals } = serverPreset({ cwd: '/tmp', provider: { kind: 'demo' } });
    expect(plugins.length).toBeGreaterThan(10);
    expect(await approvals.requestApproval({ toolName: 'Bash', input: {}, sessionId: 'nobody', toolCallId: 't', signal: new AbortController().signal })).toMatchObject({ behavior: 'deny' });
  });

  it('lists each transport as a plugin on TransportContribution; the host starts them, and an attached session is served to its owner', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-preset-transports-')));
    const tokens = [{ id: 'me', sha256: hashToken('secret-token') }];
    const { plugins, approvals } = serverPreset({ cwd: dir, home: dir, provider: { kind: 'demo' }, sessionLog: false, transports: { http: { tokens, allowedRoots: [dir] }, mcp: { cwd: dir }, acp: {} } });
    const kernel = await createKernel({ plugins });
    try {
      const described = kernel.describe().plugins.filter((plugin) => plugin.contributes.includes('TransportContribution'));
      expect(described.map((plugin) => plugin.name)).toEqual(['transport-http', 'transport-mcp', 'transport-acp']);
      const transports = kernel.getAll(TransportContribution);
      expect(transports.map((transport) => transport.name)).toEqual(['http', 'mcp', 'acp']);
      // Nothing listens until the host starts a transport; then the adapter is built over this kernel.
      const http = transports[0] as HostedTransport<HttpTransport>;
      expect(http.adapter).toBeUndefined();
      const mine = new InteractiveSession({ kernel, cwd: dir });
      await mine.whenReady();
      http.attach(mine);
      await http.start();
      try {
        const url = http.adapter!.server!.url;
        const response = await fetch(`${url}/v1/sessions/${mine.getSessionId()}`, { headers: { authorization: 'Bearer secret-token' } });
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ id: mine.getSessionId(), cwd: dir });
        // Asks of attached sessions go through the preset's router to the hub.
        expect(approvals).toBeInstanceOf(ApprovalRouter);
        const outside = new InteractiveSession({ kernel, cwd: tmpdir() });
        await outside.whenReady();
        expect(() => http.attach(outside)).toThrow(expect.objectContaining({ code: 'cwd_not_allowed' }));
        await outside.shutdown();
        // A client's DELETE of a session the host attached only takes it away from the clients.
        const lent = new InteractiveSession({ kernel, cwd: dir });
        await lent.whenReady();
        await lent.setName('lent');
        http.attach(lent);
        expect((await fetch(`${url}/v1/sessions/${lent.getSessionId()}`, { method: 'DELETE', headers: { authorization: 'Bearer secret-token' } })).status).toBe(204);
        expect((await fetch(`${url}/v1/sessions/${lent.getSessionId()}`, { headers: { authorization: 'Bearer secret-token' } })).status).toBe(404);
        expect(typeof (await lent.submit('still yours?'))!.response).toBe('string');
        expect(await kernel.get(SessionStore).load(lent.getSessionId())).toBeDefined();
        await lent.shutdown();
      } finally {
        await http.stop();
      }
      // Stopping the transport leaves the host's session open (ITransportAdapter.attach).
      expect(typeof (await mine.submit('hello after stop'))!.response).toBe('string');
      await mine.shutdown();
    } finally {
      await kernel.shutdown();
    }
  });

  it('one call serves HTTP with the demo model; a run streams and /mcp answers', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-preset-server-')));
    const server = await createTesseraServer({ cwd: dir, home: dir, provider: { kind: 'demo' }, sessionLog: false, permissions: { allow: ['Bash(pwd)', 'Write'] }, tokens: [{ id: 'me', sha256: hashToken('secret-token') }, { id: 'other', sha256: hashToken('other-token') }], maxSessionsPerOwner: 1 });
    try {
      const headers = { authorization: 'Bearer secret-token', 'content-type': 'application/json' };
      const created = (await (await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers, body: '{}' })).json()) as { id: string };
      const second = await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers, body: '{}' });
      expect(second.status).toBe(429);
      expect(((await second.json()) as { error: { code: string } }).error.code).toBe('too_many_sessions');
      const text = await (await fetch(`${server.url}/v1/sessions/${created.id}/messages`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'hello' }) })).text();
      expect(text).toContain('"type":"start"');
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(text).toContain('"type":"tool-output-available"');
      const mcp = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...headers, accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
      expect(mcp.status).toBe(200);
      // The MCP session is the token's: another token holding its id is told it does not exist.
      const mcpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-session-id': mcp.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
      const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect((await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, authorization: 'Bearer other-token' }, body: list })).status).toBe(404);
      expect((await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, authorization: 'Bearer secret-token' }, body: list })).status).toBe(200);
      // Many clients share the event loop: after each model reply a session waits its turn (fairRoundsPlugin).
      expect(server.kernel.describe().hooks.afterProviderResponse?.map((tap) => tap.name)).toContain('session-hub:fair-rounds');
    } finally {
      await server.close();
    }
  });
});
