import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionEntrySchema, sessionHeaderSchema, type FileEntry } from './entries.js';
import { migrateToCurrentVersion } from './migrations.js';
import { SessionManager } from './session-manager.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const compatDir = join(repoRoot, '..', 'shared', 'compat', 'pi-sessions');

describe('migrateToCurrentVersion', () => {
  it('turns a v1 file into v3 with a linear chain of 8-char ids', () => {
    const entries = [
      { type: 'session', id: 's', timestamp: 't', cwd: '/' },
      { type: 'message', timestamp: 't', message: { role: 'user', content: 'a' } },
      { type: 'message', timestamp: 't', message: { role: 'hookMessage', content: 'b' } },
    ] as unknown as FileEntry[];
    expect(migrateToCurrentVersion(entries)).toBe(true);
    const [header, first, second] = entries as Record<string, unknown>[];
    expect(header?.version).toBe(3);
    expect(first?.id).toHaveLength(8);
    expect(first?.parentId).toBeNull();
    expect(second?.parentId).toBe(first?.id);
    expect((second?.message as { role: string }).role).toBe('custom');
  });

  it('maps firstKeptEntryIndex (header = line 0) to firstKeptEntryId', () => {
    const entries = [
      { type: 'session', id: 's', timestamp: 't', cwd: '/' },
      { type: 'message', timestamp: 't', message: { role: 'user', content: 'a' } },
      { type: 'message', timestamp: 't', message: { role: 'user', content: 'b' } },
      { type: 'compaction', timestamp: 't', summary: 's', tokensBefore: 1, firstKeptEntryIndex: 2 },
      { type: 'compaction', timestamp: 't', summary: 's', tokensBefore: 1, firstKeptEntryIndex: 0 },
    ] as unknown as FileEntry[];
    migrateToCurrentVersion(entries);
    const rows = entries as Record<string, unknown>[];
    expect(rows[3]?.firstKeptEntryId).toBe(rows[2]?.id);
    expect('firstKeptEntryIndex' in (rows[3] as object)).toBe(false);
    expect(rows[4]?.firstKeptEntryId).toBeUndefined();
  });

  it('leaves v2 ids unchanged and v3 files alone', () => {
    const v2 = [
      { type: 'session', version: 2, id: 's', timestamp: 't', cwd: '/' },
      { type: 'message', id: 'abcdefgh', parentId: null, timestamp: 't', message: { role: 'user', content: 'a' } },
    ] as unknown as FileEntry[];
    expect(migrateToCurrentVersion(v2)).toBe(true);
    expect((v2[1] as { id: string }).id).toBe('abcdefgh');
    expect(migrateToCurrentVersion(v2)).toBe(false);
  });

  it('throws for a newer version without changing anything', () => {
    const entries = [{ type: 'session', version: 5, id: 's', timestamp: 't', cwd: '/' }, { type: 'message', timestamp: 't' }] as unknown as FileEntry[];
    const before = structuredClone(entries);
    expect(() => migrateToCurrentVersion(entries, '/x.jsonl')).toThrow(/version 5, newer than the supported version 3/);
    expect(entries).toEqual(before);
  });
});

describe('real pi v1 sessions', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-compat-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const name of ['large-session.jsonl', 'before-compaction.jsonl']) {
    it(`${name} loads, migrates to v3 with unique 8-char ids and builds a context`, async () => {
      const file = join(dir, name);
      await copyFile(join(compatDir, name), file);
      const session = await SessionManager.open(file, { agentDir: join(dir, 'agent'), terminalId: null, onWarning: () => undefined });
      const entries = session.getEntries();
      expect(entries.length).toBeGreaterThan(1000);
      expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
      for (const entry of entries) expect(entry.id).toMatch(/^[0-9a-f-]{8}$/);
      const context = session.buildSessionContext();
      expect(context.messages.length).toBeGreaterThan(100);
      expect(context.model).not.toBeNull();

      const written = (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
      expect(sessionHeaderSchema.parse(written[0]).version).toBe(3);
      for (const line of written.slice(1)) expect(sessionEntrySchema.safeParse(line).success).toBe(true);
      const compactions = written.filter((line) => line.type === 'compaction');
      for (const compaction of compactions) expect(entries.some((entry) => entry.id === compaction.firstKeptEntryId)).toBe(true);
      if (name === 'before-compaction.jsonl') expect(compactions).toHaveLength(2);
    });
  }
});
