import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalRouter } from '@tessera/session-hub';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultFlags } from './args.js';
import { composeHost } from './host-sessions.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('composeHost', () => {
  it('composes one kernel for many clients: sessions take turns after each model reply, and a session runs', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-host-')));
    const errors: string[] = [];
    const host = await composeHost({
      flags: { ...defaultFlags(), provider: 'demo' },
      io: { stdout: () => undefined, stderr: (text) => errors.push(text), cwd: dir, home: dir, env: { TESSERA_SESSION_LOG: '0' } },
      approvals: new ApprovalRouter(),
    });
    try {
      expect(host.kernel.describe().hooks.afterProviderResponse?.map((tap) => tap.name)).toContain('session-hub:fair-rounds');
      const session = await host.sessions.open({ cwd: dir });
      const result = await session.submit('hello');
      expect(result?.response).not.toBe('');
      await session.shutdown();
    } finally {
      await host.close();
    }
    expect(errors).toEqual([]);
  });
});
