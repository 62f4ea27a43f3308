import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel } from '@tessera/kernel';
import { describe, expect, it } from 'vitest';
import { cliPreset } from './preset.js';

describe('transcript_path', () => {
  it('sends hooks the JSONL file the session store writes, once the session has a reply', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tessera-transcript-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'tessera-transcript-cwd-'));
    const record = { Stop: [{ hooks: [{ type: 'command' as const, command: `cat >> "${join(cwd, 'stop.jsonl')}"; echo >> "${join(cwd, 'stop.jsonl')}"` }] }] };
    const kernel = await createKernel({
      plugins: cliPreset({ cwd, home, provider: { kind: 'demo' }, sessionLog: false, hookConfigs: [{ config: record, source: { file: join(cwd, 'settings.json') } }] }),
    });
    try {
      const session = kernel.createSession({ cwd });
      await session.run('hello');
      await session.run('again');
      const inputs = readFileSync(join(cwd, 'stop.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { transcript_path: string });
      const path = inputs.at(-1)!.transcript_path;
      expect(path.startsWith(join(home, '.tessera', 'agent', 'sessions'))).toBe(true);
      expect(path.endsWith(`_${session.sessionId}.jsonl`)).toBe(true);
      expect(readFileSync(path, 'utf8')).toContain('hello');
    } finally {
      await kernel.shutdown();
    }
  });
});
