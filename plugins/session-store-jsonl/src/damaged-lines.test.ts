import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ISessionRecord, Message } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonlSessionStore } from './jsonl-session-store.js';
import { JsonlSessionTree } from './jsonl-session-tree.js';
import { LEAF_MARKER_TYPE } from './leaf-marker.js';
import { sessionDirFor, sessionFileName } from './paths.js';
import { SessionManager } from './session-manager.js';

let dir: string;
let warnings: Array<{ message: string; details: Record<string, unknown> | undefined }>;
const opts = () => ({ agentDir: dir, terminalId: null, onWarning: (message: string, details?: Record<string, unknown>) => void warnings.push({ message, details }) });
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-damaged-'));
  warnings = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const conversation: Message[] = [
  { role: 'user', content: 'list the files' },
  { role: 'assistant', state: 'complete', stopReason: 'tool_use', content: [{ type: 'text', text: 'looking' }, { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
  { role: 'tool', content: [{ type: 'tool_result', toolUseId: 't1', toolName: 'Bash', content: 'a.txt', isError: false }] },
  { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'one file: a.txt' }] },
  { role: 'user', content: 'thanks' },
  { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'you are welcome' }] },
];
const record = (messages: Message[]): ISessionRecord => ({ id: 'damaged', cwd: '/proj', createdAt: 't', updatedAt: 't', messages, history: [] });

/** Saves `conversation` as session "damaged", then replaces line `line` (1-based) with `damage(line text)`; returns the file. */
async function damagedSession(line: number, damage: (text: string) => string): Promise<string> {
  const store = new JsonlSessionStore(opts());
  await store.save(record(conversation));
  await store.close();
  const [info] = await SessionManager.listAll(opts());
  const file = info!.path;
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines[line - 1] = damage(lines[line - 1]!);
  await writeFile(file, lines.join('\n'));
  return file;
}
/** Keeps the first half of a line: its `id` and `parentId` (written last) are gone. */
const truncate = (text: string) => text.slice(0, text.length >> 1);
/** Breaks the JSON inside the message; `id` and `parentId` are still readable. */
const garble = (text: string) => text.replace('"content":', '"content"');

describe('loading a session file with a damaged line', () => {
  for (const [how, damage] of [
    ['cut in half', truncate],
    ['garbled with its id still readable', garble],
  ] as const) {
    it(`line 4 ${how}: every other message loads in order, a warning names the file and line 4, the file is unchanged`, async () => {
      const file = await damagedSession(4, damage);
      expect(JSON.parse((await readFile(file, 'utf8')).split('\n')[2]!).message.role).toBe('assistant');
      const bytes = await readFile(file);

      const store = new JsonlSessionStore(opts());
      const loaded = await store.load('damaged');
      await store.close();
      // Line 4 held the tool result; everything before and after it is on the branch.
      expect(loaded?.messages).toEqual(conversation.filter((message) => message.role !== 'tool'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.details).toEqual({ file, line: 4 });
      expect(warnings[0]!.message).toMatch(new RegExp(`^${escape(file)}:4: not JSON .*; the line was skipped`));
      expect(warnings[0]!.message).toMatch(/Entry \w+ \(line 5\) lost its parent with this line and now continues from entry \w+ \(line 3\)/);
      expect(await readFile(file)).toEqual(bytes);
    });
  }

  it('keeps the damaged line when the session continues: new messages are appended after it', async () => {
    const file = await damagedSession(4, truncate);
    const bytes = await readFile(file, 'utf8');
    const store = new JsonlSessionStore(opts());
    const loaded = await store.load('damaged');
    const more: Message[] = [...loaded!.messages, { role: 'user', content: 'one more' }, { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'sure' }] }];
    await store.save(record(more));
    await store.close();
    expect((await readFile(file, 'utf8')).startsWith(bytes)).toBe(true);
    expect((await new JsonlSessionStore(opts()).load('damaged'))?.messages).toEqual(more);
  });

  it('lists a damaged session with a warning naming the file and line, and leaves the file as it is', async () => {
    const file = await damagedSession(4, truncate);
    const bytes = await readFile(file);
    const store = new JsonlSessionStore(opts());
    const [info] = await new JsonlSessionTree(store).list();
    await store.close();
    expect(info).toMatchObject({ id: 'damaged', messageCount: conversation.length - 1 });
    expect(warnings).toEqual([{ message: expect.stringMatching(new RegExp(`^${escape(file)}:4: not JSON`)), details: { file, line: 4 } }]);
    expect(await readFile(file)).toEqual(bytes);
  });

  it('reports a file without a valid header in the list instead of leaving it out silently', async () => {
    const projectDir = sessionDirFor('/proj', dir);
    await mkdir(projectDir, { recursive: true });
    const file = join(projectDir, sessionFileName('broken'));
    await writeFile(file, 'not a header\n');
    const store = new JsonlSessionStore(opts());
    expect(await new JsonlSessionTree(store).list()).toEqual([]);
    expect(warnings).toEqual([{ message: expect.stringContaining(`${file}: left out of the session list`), details: { file } }]);
    expect(await readFile(file, 'utf8')).toBe('not a header\n');
  });
});

describe('reattaching what hung from a damaged line', () => {
  const header = JSON.stringify({ type: 'session', version: 3, id: 'tree', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/proj' });
  const entry = (id: string, parentId: string | null, role: 'user' | 'assistant', text: string) =>
    JSON.stringify({ type: 'message', id, parentId, timestamp: '2025-01-01T00:00:01.000Z', message: role === 'user' ? { role, content: text } : { role, content: [{ type: 'text', text }], stopReason: 'stop' } });
  const texts = (manager: SessionManager) => manager.buildSessionContext().messages.map((message) => JSON.stringify((message as unknown as { content: unknown }).content).match(/[a-z ]+/g)?.find((word) => word !== 'text' && word !== 'type'));
  async function open(lines: string[]): Promise<{ manager: SessionManager; file: string; bytes: string }> {
    const file = join(dir, 'tree.jsonl');
    const bytes = `${[header, ...lines].join('\n')}\n`;
    await writeFile(file, bytes);
    return { manager: await SessionManager.open(file, opts()), file, bytes };
  }

  it('follows the parent a damaged line still shows, not the line before it on another branch', async () => {
    const { manager, file, bytes } = await open([
      entry('a', null, 'user', 'first'),
      entry('b', 'a', 'assistant', 'reply'),
      entry('c', 'b', 'user', 'abandoned'),
      entry('d', 'c', 'assistant', 'abandoned reply'),
      garble(entry('e', 'b', 'user', 'retry')),
      entry('f', 'e', 'assistant', 'retried reply'),
    ]);
    expect(manager.getEntry('f')?.parentId).toBe('b');
    expect(texts(manager)).toEqual(['first', 'reply', 'retried reply']);
    expect(warnings.map(({ message }) => message)).toEqual([expect.stringMatching(/:6: .*Entry f \(line 7\) lost its parent with this line and now continues from entry b \(line 3\)$/)]);
    expect(await readFile(file, 'utf8')).toBe(bytes);
  });

  it('without a readable link, continues from the entry before the damage, across several damaged lines', async () => {
    const { manager } = await open([entry('a', null, 'user', 'first'), entry('b', 'a', 'assistant', 'reply'), '{"type":"mess', 'garbage', entry('e', 'd', 'user', 'after')]);
    expect(manager.getEntry('e')?.parentId).toBe('b');
    expect(texts(manager)).toEqual(['first', 'reply', 'after']);
    expect(warnings.map(({ details }) => details?.line)).toEqual([4, 5]);
    expect(warnings[1]!.message).toMatch(/Entry e \(line 6\) lost its parent with this line and now continues from entry b \(line 3\)$/);
  });

  it('takes a leaf marker before the damage for the entry it marks', async () => {
    const marker = JSON.stringify({ type: 'custom', customType: LEAF_MARKER_TYPE, id: 'm', parentId: 'a', timestamp: '2025-01-01T00:00:01.000Z' });
    const { manager } = await open([entry('a', null, 'user', 'first'), entry('b', 'a', 'assistant', 'old reply'), marker, '{"type":"mess', entry('d', 'c', 'assistant', 'new reply')]);
    expect(manager.getEntry('d')?.parentId).toBe('a');
    expect(texts(manager)).toEqual(['first', 'new reply']);
  });

  it('makes an entry whose parent was the damaged first entry a root', async () => {
    const { manager } = await open(['{"broken', entry('b', 'a', 'assistant', 'reply'), entry('c', 'b', 'user', 'next')]);
    expect(manager.getEntry('b')?.parentId).toBeNull();
    expect(texts(manager)).toEqual(['reply', 'next']);
    expect(warnings[0]!.message).toMatch(/Entry b \(line 3\) lost its parent with this line and now starts a new root$/);
  });

  it('leaves an entry whose parent is missing with no damaged line before it as it is', async () => {
    const { manager } = await open([entry('a', null, 'user', 'first'), entry('b', 'elsewhere', 'assistant', 'reply'), '{"broken']);
    expect(manager.getEntry('b')?.parentId).toBe('elsewhere');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/:4: not JSON .*; the line was skipped \(the file is left as it is\)$/);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
