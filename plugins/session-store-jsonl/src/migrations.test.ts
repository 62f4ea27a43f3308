import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureCorpus, realCorpus, type Corpus } from '../../../test/support/compat-corpus.js';
import { sessionEntrySchema, sessionHeaderSchema, type FileEntry } from './entries.js';
import { migrateToCurrentVersion } from './migrations.js';
import { SessionManager } from './session-manager.js';

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

/** pi session files and what each must yield; the real ones only when ../shared/compat is there. */
interface PiFile {
  corpus: Corpus;
  name: string;
  minEntries: number;
  compactions: number;
  minContextMessages: number;
}
const piFiles: PiFile[] = [
  { corpus: fixtureCorpus, name: 'v1-two-compactions.jsonl', minEntries: 40, compactions: 2, minContextMessages: 8 },
  { corpus: fixtureCorpus, name: 'v2-branches.jsonl', minEntries: 18, compactions: 1, minContextMessages: 7 },
  { corpus: realCorpus, name: 'large-session.jsonl', minEntries: 1000, compactions: 0, minContextMessages: 100 },
  { corpus: realCorpus, name: 'before-compaction.jsonl', minEntries: 1000, compactions: 2, minContextMessages: 100 },
];

describe('pi sessions from disk', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-compat-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const { corpus, name, minEntries, compactions: compactionCount, minContextMessages } of piFiles) {
    const run = corpus === realCorpus && !realCorpus.present ? it.skip : it;
    const label = corpus === realCorpus && !realCorpus.present ? `${name} (real-world corpus skipped: not found)` : `${name} (${corpus.label})`;
    run(`${label} loads, migrates to v3 with unique 8-char ids and builds a context`, async () => {
      const file = join(dir, name);
      await copyFile(join(corpus.root, 'pi-sessions', name), file);
      const session = await SessionManager.open(file, { agentDir: join(dir, 'agent'), terminalId: null, onWarning: () => undefined });
      const entries = session.getEntries();
      expect(entries.length).toBeGreaterThanOrEqual(minEntries);
      expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
      for (const entry of entries) expect(entry.id).toMatch(/^[0-9a-f-]{8}$/);
      const context = session.buildSessionContext();
      expect(context.messages.length).toBeGreaterThanOrEqual(minContextMessages);
      expect(context.model).not.toBeNull();

      const written = (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
      expect(sessionHeaderSchema.parse(written[0]).version).toBe(3);
      for (const line of written.slice(1)) expect(sessionEntrySchema.safeParse(line).success).toBe(true);
      const compactions = written.filter((line) => line.type === 'compaction');
      for (const compaction of compactions) expect(entries.some((entry) => entry.id === compaction.firstKeptEntryId)).toBe(true);
      expect(compactions).toHaveLength(compactionCount);
    });
  }
});

describe('pi fixture sessions in detail', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-pi-fixtures-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  async function open(name: string) {
    const file = join(dir, name);
    await copyFile(join(fixtureCorpus.root, 'pi-sessions', name), file);
    return SessionManager.open(file, { agentDir: join(dir, 'agent'), terminalId: null, onWarning: () => undefined });
  }

  it('v1: the header keeps its legacy fields, compactions point at the lines they counted (header = line 0)', async () => {
    const session = await open('v1-two-compactions.jsonl');
    expect(session.getHeader()).toMatchObject({ version: 3, provider: 'anthropic', modelId: 'claude-sonnet-4-5', thinkingLevel: 'off' });
    expect(session.getHeader().branchedFrom).toMatch(/previous\.jsonl$/);
    const entries = session.getEntries();
    const compactions = entries.filter((entry) => entry.type === 'compaction');
    const keptText = compactions.map((compaction) => {
      const kept = entries.find((entry) => entry.id === (compaction as { firstKeptEntryId?: string }).firstKeptEntryId) as { message?: { content: { text: string }[] } };
      return kept.message?.content[0]?.text;
    });
    expect(keptText.map((text) => text?.slice(0, 6))).toEqual(['step 3', 'step 5']);
    // A linear chain: each entry's parent is the one before it.
    entries.forEach((entry, index) => expect(entry.parentId).toBe(index === 0 ? null : entries[index - 1]!.id));
    const context = session.buildSessionContext();
    expect(context.messages[0]).toMatchObject({ role: 'compactionSummary', tokensBefore: 185014 });
    expect(context.thinkingLevel).toBe('minimal');
    expect(context.messages.some((message) => message.role === 'bashExecution')).toBe(true);
  });

  it('v2: ids are kept, hookMessage becomes custom, the context follows the leaf branch through its compaction', async () => {
    const session = await open('v2-branches.jsonl');
    expect(session.getEntry('a0000001')).toBeDefined();
    expect(session.getLeafId()).toBe('c000000b');
    expect(session.getChildren('a0000004').map((entry) => entry.id)).toEqual(['b0000001', 'c0000001']);
    expect(session.getLabel('b0000001')).toBe('commander attempt');
    expect((session.getEntry('c0000002') as { message: { role: string } }).message.role).toBe('custom');

    const context = session.buildSessionContext();
    expect(context.messages.map((message) => message.role)).toEqual(['compactionSummary', 'user', 'assistant', 'toolResult', 'custom', 'user', 'assistant']);
    expect(context.model).toEqual({ provider: 'anthropic', modelId: 'claude-opus-4-5' });
    expect(context.thinkingLevel).toBe('high');

    session.branch('b0000002');
    const other = session.buildSessionContext();
    expect(other.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']);
    expect(JSON.stringify(other.messages)).toContain('Switched to commander.');
  });
});
