import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadEntriesFromFile } from './session-loader.js';
import { SessionManager, type SessionManagerOptions } from './session-manager.js';
import { encodeCwd, sessionDirFor } from './paths.js';

const user = (text: string) => ({ role: 'user', content: text, timestamp: 1 });
const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }], provider: 'anthropic', model: 'claude-test', stopReason: 'stop', timestamp: 2 });

let dir: string;
let options: SessionManagerOptions;
let warnings: string[];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-jsonl-'));
  warnings = [];
  options = { agentDir: join(dir, 'agent'), terminalId: null, onWarning: (message) => warnings.push(message) };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line));
const exists = (file: string) => stat(file).then(() => true, () => false);

describe('paths', () => {
  it('encodes the cwd and places files under ~/.tessera/agent/sessions', () => {
    expect(encodeCwd('/work/my:proj\\x')).toBe('work-my-proj-x');
    const session = SessionManager.create('/work/pi', options);
    const file = session.getSessionFile() as string;
    expect(file.startsWith(join(dir, 'agent', 'sessions', '--work-pi--'))).toBe(true);
    expect(file).toMatch(new RegExp(`/\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z_${session.getSessionId()}\\.jsonl$`));
  });
});

describe('isOnDisk', () => {
  it('is false until the first reply is written, true after, and true for a session opened from its file; never for an in-memory one', async () => {
    const session = SessionManager.create('/work/disk', options);
    session.appendMessage(user('hi') as never);
    await session.flush();
    expect(session.isOnDisk()).toBe(false);
    expect(await exists(session.getSessionFile() as string)).toBe(false);
    session.appendMessage(assistant('hello') as never);
    await session.flush();
    expect(session.isOnDisk()).toBe(true);
    expect(await exists(session.getSessionFile() as string)).toBe(true);
    expect((await SessionManager.open(session.getSessionFile() as string, options)).isOnDisk()).toBe(true);
    const memory = SessionManager.inMemory('/work/disk', options);
    memory.appendMessage(user('hi') as never);
    memory.appendMessage(assistant('hello') as never);
    expect(memory.isOnDisk()).toBe(false);
  });
});

describe('loadEntriesFromFile', () => {
  it('returns [] for missing, empty, headerless and non-JSON files', async () => {
    expect(await loadEntriesFromFile(join(dir, 'missing.jsonl'))).toEqual([]);
    for (const [name, text] of [['empty', ''], ['noheader', '{"type":"message","id":"a"}\n'], ['garbage', 'not json\n']] as const) {
      await writeFile(join(dir, name), text);
      expect(await loadEntriesFromFile(join(dir, name))).toEqual([]);
    }
  });

  it('skips a malformed middle line', async () => {
    const file = join(dir, 's.jsonl');
    await writeFile(file, '{"type":"session","id":"x","timestamp":"t","cwd":"/"}\nnot json\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}\n');
    expect(await loadEntriesFromFile(file)).toHaveLength(2);
  });
});

describe('findMostRecentSession', () => {
  it('returns null for an empty or missing directory', async () => {
    expect(await SessionManager.findMostRecentSession(join(dir, 'nope'))).toBeNull();
    expect(await SessionManager.findMostRecentSession(dir)).toBeNull();
  });

  it('ignores non-jsonl and headerless files and picks the newest mtime', async () => {
    const header = (id: string) => `${JSON.stringify({ type: 'session', id, timestamp: 't', cwd: '/' })}\n`;
    await writeFile(join(dir, 'a.jsonl'), header('a'));
    await writeFile(join(dir, 'b.jsonl'), header('b'));
    await writeFile(join(dir, 'c.txt'), header('c'));
    await writeFile(join(dir, 'd.jsonl'), 'garbage\n');
    await utimes(join(dir, 'a.jsonl'), 1000, 1000);
    await utimes(join(dir, 'b.jsonl'), 2000, 2000);
    expect(await SessionManager.findMostRecentSession(dir)).toBe(join(dir, 'b.jsonl'));
  });
});

describe('persistence', () => {
  it('defers the first write until an assistant message, then writes everything, then appends', async () => {
    const session = SessionManager.create('/work', options);
    const file = session.getSessionFile() as string;
    session.appendMessage(user('hello'));
    session.appendCustomEntry('state', { n: 1 });
    await session.flush();
    expect(await exists(file)).toBe(false);
    session.appendMessage(assistant('hi'));
    await session.flush();
    expect((await lines(file)).map((line) => line.type)).toEqual(['session', 'message', 'custom', 'message']);
    session.appendMessage(user('more'));
    await session.flush();
    const written = await lines(file);
    expect(written).toHaveLength(5);
    expect(written[0]).toMatchObject({ type: 'session', version: 3, id: session.getSessionId(), cwd: '/work' });
    expect(new Set(written.slice(1).map((line) => line.id)).size).toBe(4);
    await session.close();
  });

  it('reopens with every entry and the last line as leaf', async () => {
    const session = SessionManager.create('/work', options);
    const a = session.appendMessage(user('a'));
    session.appendMessage(assistant('b'));
    const c = session.appendMessage(user('c'));
    session.branch(a);
    await session.flush();
    const reopened = await SessionManager.open(session.getSessionFile() as string, options);
    expect(reopened.getEntries()).toEqual(session.getEntries());
    expect(reopened.getLeafId()).toBe(c);
    expect(reopened.getSessionId()).toBe(session.getSessionId());
    expect(reopened.getCwd()).toBe('/work');
  });

  it('moves a headerless file aside and starts a new session at the same path', async () => {
    const file = join(dir, 'broken.jsonl');
    await writeFile(file, '{"type":"message","id":"keep-me"}\n');
    const session = await SessionManager.open(file, options);
    const written = await lines(file);
    expect(written).toEqual([expect.objectContaining({ type: 'session', id: session.getSessionId() })]);
    const aside = (await readdir(dir)).find((name) => name.startsWith('broken.jsonl.corrupt-'));
    expect(aside).toBeDefined();
    expect(await readFile(join(dir, aside as string), 'utf8')).toContain('keep-me');
    expect(warnings.some((warning) => warning.includes('moved it to'))).toBe(true);
    expect((await SessionManager.open(file, options)).getSessionId()).toBe(session.getSessionId());
  });

  it('rewrites an empty file to exactly one header', async () => {
    const file = join(dir, 'empty.jsonl');
    await writeFile(file, '');
    const session = await SessionManager.open(file, options);
    expect(await lines(file)).toEqual([expect.objectContaining({ type: 'session', id: session.getSessionId() })]);
    expect((await readdir(dir)).filter((name) => name.includes('corrupt'))).toEqual([]);
  });

  it('drops a torn last line, keeps every complete line and appends on a fresh line', async () => {
    const session = SessionManager.create('/work', options);
    session.appendMessage(user('a'));
    session.appendMessage(assistant('b'));
    await session.close();
    const file = session.getSessionFile() as string;
    await writeFile(file, `${await readFile(file, 'utf8')}{"type":"message","id":"tor`);
    const reopened = await SessionManager.open(file, options);
    expect(reopened.getEntries()).toHaveLength(2);
    reopened.appendMessage(user('c'));
    await reopened.close();
    const again = await SessionManager.open(file, options);
    expect(again.getEntries().map((entry) => entry.type === 'message' && entry.message.content)).toEqual(['a', [{ type: 'text', text: 'b' }], 'c']);
  });

  it('ignores entries without an id (with a warning) and keeps the rest in order', async () => {
    const file = join(dir, 'idless.jsonl');
    const entry = (id: string | undefined, parentId: string | null, text: string) => JSON.stringify({ type: 'message', id, parentId, timestamp: 't', message: user(text) });
    await writeFile(file, ['{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}', entry('a', null, 'a'), entry(undefined, 'a', 'lost'), entry('b', 'a', 'b'), ''].join('\n'));
    const session = await SessionManager.open(file, options);
    expect(session.getEntries().map((item) => item.id)).toEqual(['a', 'b']);
    expect(session.getLeafId()).toBe('b');
    expect(warnings.some((warning) => warning.includes('1 entries without an id were ignored'))).toBe(true);
  });

  it('refuses a newer version and leaves the file untouched', async () => {
    const file = join(dir, 'future.jsonl');
    const text = '{"type":"session","version":9,"id":"f","timestamp":"t","cwd":"/"}\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}\n';
    await writeFile(file, text);
    await expect(SessionManager.open(file, options)).rejects.toMatchObject({ code: 'session_version_too_new' });
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('rewrites a migrated file atomically and appends without duplicating ids (#3930)', async () => {
    const file = join(dir, 'v1.jsonl');
    await writeFile(file, '{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n{"type":"message","timestamp":"t","message":{"role":"user","content":"only user"}}\n');
    const session = await SessionManager.open(file, options);
    expect((await lines(file))[0].version).toBe(3);
    session.appendMessage(user('second'));
    await session.flush();
    const written = await lines(file);
    expect(written).toHaveLength(3);
    expect(new Set(written.slice(1).map((line) => line.id)).size).toBe(2);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('setSessionName rewrites the header atomically', async () => {
    const session = SessionManager.create('/work', options);
    session.appendMessage(user('a'));
    session.appendMessage(assistant('b'));
    session.setSessionName('My session');
    session.appendMessage(user('c'));
    await session.flush();
    const written = await lines(session.getSessionFile() as string);
    expect(written[0].title).toBe('My session');
    expect(written).toHaveLength(4);
    expect((await SessionManager.open(session.getSessionFile() as string, options)).getSessionName()).toBe('My session');
  });

  it('latches the first write error and re-throws it on later operations', async () => {
    const session = SessionManager.create('/work', { ...options, sessionDir: join(dir, 'blocker', 'sub') });
    await writeFile(join(dir, 'blocker'), 'a file where a directory should be');
    session.appendMessage(user('a'));
    session.appendMessage(assistant('b'));
    await expect(session.flush()).rejects.toMatchObject({ code: 'session_persistence_failed' });
    expect(() => session.appendMessage(user('c'))).toThrow(/Could not/);
    await expect(session.flush()).rejects.toMatchObject({ code: 'session_persistence_failed' });
    expect(warnings.filter((warning) => warning.includes('Could not'))).toHaveLength(1);
  });

  it('forkFrom writes a new file at once, migrating a v1 source without touching it', async () => {
    const source = join(dir, 'v1.jsonl');
    const text = '{"type":"session","id":"old","timestamp":"t","cwd":"/p"}\n{"type":"message","timestamp":"t","message":{"role":"user","content":"u"}}\n{"type":"message","timestamp":"t","message":{"role":"assistant","content":[]}}\n';
    await writeFile(source, text);
    const fork = await SessionManager.forkFrom(source, '/target', options);
    const file = fork.getSessionFile() as string;
    const written = await lines(file);
    expect(written[0]).toMatchObject({ type: 'session', version: 3, cwd: '/target', parentSession: source, id: fork.getSessionId() });
    expect(file.endsWith(`_${fork.getSessionId()}.jsonl`)).toBe(true);
    expect(written.slice(1).every((line) => typeof line.id === 'string' && line.id.length === 8)).toBe(true);
    expect(await readFile(source, 'utf8')).toBe(text);
    await expect(SessionManager.forkFrom(join(dir, 'none.jsonl'), '/t', options)).rejects.toMatchObject({ code: 'invalid_session_file' });
  });

  it('createBranchedSession (persisted) defers when the path has no assistant message', async () => {
    const session = SessionManager.create('/work', options);
    const first = session.appendMessage(user('1'));
    session.appendMessage(assistant('2'));
    const original = session.getSessionFile() as string;
    const file = (await session.createBranchedSession(first)) as string;
    expect(file).not.toBe(original);
    expect(session.getSessionFile()).toBe(file);
    expect(await exists(file)).toBe(false);
    session.appendCustomEntry('x');
    session.appendMessage(assistant('3'));
    await session.flush();
    const written = await lines(file);
    expect(written.filter((line) => line.type === 'session')).toHaveLength(1);
    expect(written[0].parentSession).toBe(original);
    expect(new Set(written.slice(1).map((line) => line.id)).size).toBe(written.length - 1);
  });

  it('createBranchedSession (persisted) writes at once when the path has an assistant message', async () => {
    const session = SessionManager.create('/work', options);
    session.appendMessage(user('1'));
    const second = session.appendMessage(assistant('2'));
    session.appendMessage(user('3'));
    const file = (await session.createBranchedSession(second)) as string;
    expect((await lines(file)).map((line) => line.type)).toEqual(['session', 'message', 'message']);
  });

  it('continueRecent prefers the terminal breadcrumb, then the newest file, then creates', async () => {
    const withTerminal = { ...options, terminalId: 'tty/1' };
    const created = await SessionManager.continueRecent('/work', withTerminal);
    expect(created.getEntries()).toEqual([]);
    const older = SessionManager.create('/work', withTerminal);
    older.appendMessage(assistant('older'));
    await older.flush();
    const newer = SessionManager.create('/work', { ...options });
    newer.appendMessage(assistant('newer'));
    await newer.flush();
    await utimes(older.getSessionFile() as string, 1000, 1000);
    expect((await SessionManager.continueRecent('/work', withTerminal)).getSessionId()).toBe(older.getSessionId());
    expect((await SessionManager.continueRecent('/work', options)).getSessionId()).toBe(newer.getSessionId());
    expect(await readdir(join(dir, 'agent', 'terminal-sessions'))).toEqual(['tty_1']);
  });

  it('lists sessions from a bounded prefix and tail', async () => {
    const a = SessionManager.create('/work', options);
    a.appendMessage(user('first question'));
    a.appendMessage({ ...assistant('answer'), timestamp: Date.parse('2030-01-01T00:00:00Z') });
    a.setSessionName('named');
    await a.flush();
    const b = SessionManager.create('/other', options);
    b.appendMessage(assistant('x'));
    await b.flush();
    const infos = await SessionManager.list('/work', options);
    expect(infos).toHaveLength(1);
    expect(infos[0]).toMatchObject({ id: a.getSessionId(), cwd: '/work', name: 'named', firstMessage: 'first question' });
    expect(infos[0]?.modified.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    const all = await SessionManager.listAll(options);
    expect(all.map((info) => info.id).sort()).toEqual([a.getSessionId(), b.getSessionId()].sort());
    expect((await SessionManager.getRecentSessions(sessionDirFor('/work', options.agentDir), 5, options))[0]?.id).toBe(a.getSessionId());
  });

  it('reads modified from the tail of a large file', async () => {
    const session = SessionManager.create('/big', options);
    session.appendMessage(user('start'));
    for (let index = 0; index < 200; index += 1) session.appendMessage({ ...assistant('x'.repeat(1000)), timestamp: index });
    session.appendMessage({ ...assistant('last'), timestamp: Date.parse('2031-05-05T00:00:00Z') });
    await session.flush();
    await mkdir(join(dir, 'unused'), { recursive: true });
    const [info] = await SessionManager.list('/big', options);
    expect(info?.modified.toISOString()).toBe('2031-05-05T00:00:00.000Z');
    expect(info?.firstMessage).toBe('start');
  });
});

describe('getSessionName', () => {
  it("takes the header title, else the last pi session_info name", async () => {
    const file = join(dir, 'named.jsonl');
    const header = { type: 'session', version: 3, id: 'named', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' };
    const entries = [
      { type: 'session_info', id: 'a1', parentId: null, timestamp: 't', name: 'first' },
      { type: 'message', id: 'a2', parentId: 'a1', timestamp: 't', message: user('hi') },
      { type: 'session_info', id: 'a3', parentId: 'a2', timestamp: 't', name: 'second' },
      { type: 'session_info', id: 'a4', parentId: 'a3', timestamp: 't' },
    ];
    await writeFile(file, [header, ...entries].map((line) => JSON.stringify(line)).join('\n') + '\n');
    const session = await SessionManager.open(file, options);
    expect(session.getSessionName()).toBe('second');
    await writeFile(file, [{ ...header, title: 'titled' }, ...entries].map((line) => JSON.stringify(line)).join('\n') + '\n');
    expect((await SessionManager.open(file, options)).getSessionName()).toBe('titled');
    await writeFile(file, `${JSON.stringify(header)}\n`);
    expect((await SessionManager.open(file, options)).getSessionName()).toBeUndefined();
  });
});
