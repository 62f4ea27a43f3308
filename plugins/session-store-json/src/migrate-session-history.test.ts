import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonSessionStore, migrateSessionHistory } from './index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-migrate-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('migrateSessionHistory', () => {
  it('backfills history from messages, is idempotent, and reports what it cannot read', async () => {
    const legacy = {
      id: 'old',
      cwd: '/w',
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-02T00:00:00.000Z',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'text', text: 'a' }], state: 'complete' },
      ],
      custom: 1,
    };
    await writeFile(join(dir, 'old.json'), JSON.stringify(legacy));
    await new JsonSessionStore({ baseDir: dir }).save({ ...legacy, id: 'current', history: [] } as never);
    await writeFile(join(dir, 'junk.json'), 'not json');
    await writeFile(join(dir, 'shape.json'), JSON.stringify({ hello: 'world' }));

    const first = await migrateSessionHistory(dir);
    expect(first.migrated).toEqual(['old']);
    expect(first.unchanged).toEqual(['current']);
    expect(first.diagnostics.map((d) => d.file.split('/').pop())).toEqual(['junk.json', 'shape.json']);
    const migrated = JSON.parse(await readFile(join(dir, 'old.json'), 'utf8'));
    expect(migrated.custom).toBe(1);
    expect(migrated.history.map((entry: { type: string; category: string }) => [entry.category, entry.type])).toEqual([
      ['chat', 'user'],
      ['chat', 'assistant'],
    ]);
    expect(migrated.history[1].data).toEqual(legacy.messages[1]);

    const mtime = (await stat(join(dir, 'old.json'))).mtimeMs;
    const second = await migrateSessionHistory(dir);
    expect(second.migrated).toEqual([]);
    expect(second.unchanged.sort()).toEqual(['current', 'old']);
    expect((await stat(join(dir, 'old.json'))).mtimeMs).toBe(mtime);
    expect(await new JsonSessionStore({ baseDir: dir }).load('old')).toMatchObject({ id: 'old', custom: 1 });
  });
});
