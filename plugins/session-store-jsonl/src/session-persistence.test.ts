import { describe, expect, it } from 'vitest';
import type { SessionEntry, SessionHeader } from './entries.js';
import { MemorySessionStorage } from './memory-session-storage.js';
import { SessionPersistence } from './session-persistence.js';

/** Counts directory syncs, which make a newly created file's name durable. */
class CountingStorage extends MemorySessionStorage {
  syncedDirs: string[] = [];
  override async fsyncDir(dir: string): Promise<void> {
    this.syncedDirs.push(dir);
  }
}

const header: SessionHeader = { type: 'session', version: 3, id: 's1', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' };
const entry = (id: string, parentId: string | null): SessionEntry =>
  ({ type: 'message', id, parentId, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: id } }) as SessionEntry;
const ids = (text: string | undefined) => (text ?? '').trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id);

describe('SessionPersistence.create', () => {
  it('creates the file, keeps appending to it, and syncs its directory once at the next flush', async () => {
    const storage = new CountingStorage();
    const persistence = new SessionPersistence(storage, undefined, () => undefined);
    persistence.retarget('/agent/sessions/s1.jsonl', { onDisk: false });
    await persistence.create(header, [entry('a', null)]);
    persistence.append(entry('b', 'a'));
    await persistence.flush();
    expect(ids(storage.readTextSync('/agent/sessions/s1.jsonl'))).toEqual(['s1', 'a', 'b']);
    expect(storage.syncedDirs).toEqual(['/agent/sessions']);
    persistence.append(entry('c', 'b'));
    await persistence.flush();
    expect(storage.syncedDirs).toEqual(['/agent/sessions']);
    expect(ids(storage.readTextSync('/agent/sessions/s1.jsonl'))).toEqual(['s1', 'a', 'b', 'c']);
  });

  it('replaces a file that is already there, as rewrite does, instead of appending to it', async () => {
    const storage = new CountingStorage();
    storage.writeTextSync('/agent/sessions/s1.jsonl', '{"type":"session","id":"old"}\n{"id":"stale"}\n');
    const persistence = new SessionPersistence(storage, undefined, () => undefined);
    persistence.retarget('/agent/sessions/s1.jsonl', { onDisk: false });
    await persistence.create(header, [entry('a', null)]);
    persistence.append(entry('b', 'a'));
    await persistence.flush();
    expect(persistence.error).toBeUndefined();
    expect(ids(storage.readTextSync('/agent/sessions/s1.jsonl'))).toEqual(['s1', 'a', 'b']);
  });

  it('syncs the directory when it moves to another file before any flush', async () => {
    const storage = new CountingStorage();
    const persistence = new SessionPersistence(storage, undefined, () => undefined);
    persistence.retarget('/agent/sessions/one/s1.jsonl', { onDisk: false });
    await persistence.create(header, [entry('a', null)]);
    persistence.retarget('/agent/sessions/two/s2.jsonl', { onDisk: false });
    await persistence.flush();
    expect(storage.syncedDirs).toEqual(['/agent/sessions/one']);
  });
});
