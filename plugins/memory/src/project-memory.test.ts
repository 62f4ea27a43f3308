import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DefaultProjectMemory } from './default-project-memory.js';
import { InvalidMemoryEntryError, InvalidMemoryTopicError, MemoryCandidateNotFoundError } from './memory-errors.js';
import { MemoryPolicyEvaluator } from './memory-policy-evaluator.js';

let root: string;
let memory: DefaultProjectMemory;
let time: number;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tessera-memory-'));
  time = Date.UTC(2025, 0, 1);
  memory = new DefaultProjectMemory({ root, policy: new MemoryPolicyEvaluator(), now: () => time, sessionId: 's-1' });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const memoryDir = () => join(root, '.tessera', 'memory');

describe('ProjectMemory: append and topics', () => {
  it('writes the topic file and one index line, and lists topics with sizes', async () => {
    const result = await memory.append({ kind: 'project', topic: 'Build', text: 'Run   npm test\nbefore pushing.' });
    expect(result).toMatchObject({ topic: 'build', deduplicated: false, event: { type: 'add', topic: 'build', kind: 'project', sessionId: 's-1', at: '2025-01-01T00:00:00.000Z' } });
    await memory.append({ kind: 'user', topic: 'style', text: 'Prefers short commit messages.' });

    expect(await readFile(join(memoryDir(), 'topics', 'build.md'), 'utf8')).toBe('# build\n\n- [project] Run npm test before pushing.\n');
    expect(await readFile(join(memoryDir(), 'MEMORY.md'), 'utf8')).toBe(
      '# Project Memory\n\n- [project] build: Run npm test before pushing.\n- [user] style: Prefers short commit messages.\n',
    );
    const topics = await memory.list();
    expect(topics.map(({ topic, entries }) => ({ topic, entries }))).toEqual([
      { topic: 'build', entries: 1 },
      { topic: 'style', entries: 1 },
    ]);
    expect(topics[0]!.bytes).toBe(Buffer.byteLength('# build\n\n- [project] Run npm test before pushing.\n'));
  });

  it('deduplicates entries that differ only in case, white space and punctuation', async () => {
    await memory.append({ kind: 'project', topic: 'build', text: 'Use npm workspaces.' });
    const again = await memory.append({ kind: 'feedback', topic: 'BUILD', text: '  use NPM   workspaces!! ' });
    expect(again).toEqual({ topic: 'build', deduplicated: true });
    const other = await memory.append({ kind: 'project', topic: 'build', text: 'Use npm workspaces and turbo.' });
    expect(other.deduplicated).toBe(false);
    expect((await memory.list())[0]!.entries).toBe(2);
    expect(memory.events().map((event) => event.type)).toEqual(['add', 'add']);
  });

  it('keeps entries a person wrote by hand, and dedups against them', async () => {
    await mkdir(join(memoryDir(), 'topics'), { recursive: true });
    await writeFile(join(memoryDir(), 'topics', 'notes.md'), '# Notes\n* Deploys happen on Fridays', 'utf8');
    expect((await memory.append({ kind: 'project', topic: 'notes', text: 'deploys happen on fridays.' })).deduplicated).toBe(true);
    await memory.append({ kind: 'project', topic: 'notes', text: 'Staging resets nightly.' });
    expect(await readFile(join(memoryDir(), 'topics', 'notes.md'), 'utf8')).toBe('# Notes\n* Deploys happen on Fridays\n- [project] Staging resets nightly.\n');
  });

  it('refuses secrets with a message and writes nothing', async () => {
    const result = await memory.append({ kind: 'reference', topic: 'db', text: 'postgres://admin:pa55word@db.internal/app' });
    expect(result).toMatchObject({ deduplicated: false, refused: { kind: 'connection-string-credentials' } });
    expect(result.refused!.message).toMatch(/connection string with credentials/);
    expect(await memory.list()).toEqual([]);
    expect((await memory.show()).exists).toBe(false);
    expect(memory.events()).toEqual([]);
  });

  it('shows the index or a topic', async () => {
    expect(await memory.show('absent')).toMatchObject({ topic: 'absent', text: '', exists: false });
    await memory.append({ kind: 'project', topic: 'build', text: 'Node 20 and 24.' });
    expect(await memory.show('build')).toMatchObject({ topic: 'build', exists: true, text: '# build\n\n- [project] Node 20 and 24.\n' });
    expect((await memory.show()).text).toContain('- [project] build: Node 20 and 24.');
  });

  it.each([
    ['', /empty/],
    ['../escape', /path separator/],
    ['a/b', /path separator/],
    ['a\\b', /path separator/],
    ['..', /"\.\."/],
    ['notes..md', /"\.\."/],
    ['.hidden', /characters/],
    ['has space', /characters/],
    ['x'.repeat(65), /longer than 64/],
    ['con', /reserved/],
  ])('refuses the topic %j before touching a path', async (topic, problem) => {
    const error = await memory.append({ kind: 'project', topic, text: 'fact' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidMemoryTopicError);
    expect((error as Error).message).toMatch(problem);
    await expect(memory.show(topic)).rejects.toBeInstanceOf(InvalidMemoryTopicError);
    await expect(memory.propose({ kind: 'project', topic, text: 'fact' })).rejects.toBeInstanceOf(InvalidMemoryTopicError);
  });

  it('refuses unknown kinds and empty text', async () => {
    await expect(memory.append({ kind: 'secret' as never, topic: 'a', text: 'x' })).rejects.toBeInstanceOf(InvalidMemoryEntryError);
    await expect(memory.append({ kind: 'user', topic: 'a', text: '   ' })).rejects.toBeInstanceOf(InvalidMemoryEntryError);
  });
});

describe('ProjectMemory: pending candidates', () => {
  it('proposes, lists, approves (appending) and rejects, with events', async () => {
    const first = await memory.propose({ kind: 'feedback', topic: 'review', text: 'Keep PRs under 400 lines.', source: 'model' });
    const second = await memory.propose({ kind: 'project', topic: 'review', text: 'Two approvals for contracts changes.' });
    expect(first).toMatchObject({ deduplicated: false, candidate: { topic: 'review', source: 'model', createdAt: '2025-01-01T00:00:00.000Z' } });
    expect(await memory.propose({ kind: 'feedback', topic: 'review', text: 'keep prs under 400 lines' })).toMatchObject({ deduplicated: true, candidate: { id: first.candidate!.id } });
    expect((await memory.pending()).map((candidate) => candidate.id)).toEqual([first.candidate!.id, second.candidate!.id]);
    expect(await readFile(join(memoryDir(), 'pending.jsonl'), 'utf8')).toContain('"source":"model"');

    time += 1000;
    const approved = await memory.approve(first.candidate!.id);
    expect(approved.append).toEqual({ topic: 'review', deduplicated: false });
    expect(approved.event).toMatchObject({ type: 'approve', candidateId: first.candidate!.id, deduplicated: false, at: '2025-01-01T00:00:01.000Z' });
    expect((await memory.show('review')).text).toContain('- [feedback] Keep PRs under 400 lines.');

    const rejected = await memory.reject(second.candidate!.id);
    expect(rejected.event).toMatchObject({ type: 'reject', candidateId: second.candidate!.id });
    expect(rejected.append).toBeUndefined();
    expect(await memory.pending()).toEqual([]);
    expect((await memory.show('review')).text).not.toContain('Two approvals');
    expect(memory.events().map((event) => event.type)).toEqual(['approve', 'reject']);

    expect(await memory.propose({ kind: 'feedback', topic: 'review', text: 'Keep PRs under 400 lines' })).toEqual({ deduplicated: true });
  });

  it('refuses secret candidates and unknown ids', async () => {
    const refused = await memory.propose({ kind: 'reference', topic: 'ci', text: 'token: ghp_' + 'b'.repeat(36) });
    expect(refused).toMatchObject({ deduplicated: false, refused: { kind: 'github-token' } });
    expect(await memory.pending()).toEqual([]);
    const error = await memory.approve('m-nothing').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MemoryCandidateNotFoundError);
    expect((error as Error).message).toMatch(/Nothing is pending/);
    await expect(memory.reject('m-nothing')).rejects.toBeInstanceOf(MemoryCandidateNotFoundError);
  });

  it('records and restores used references and events', () => {
    memory.recordUsed([{ source: 'topic', topic: 'build', kind: 'project', entry: 'Node 20' }, { source: 'index' }]);
    expect(memory.used()).toEqual([{ source: 'topic', topic: 'build', kind: 'project', entry: 'Node 20' }, { source: 'index' }]);
    const other = new DefaultProjectMemory({ root, policy: new MemoryPolicyEvaluator(), now: () => time });
    const event = { type: 'add', at: '2025-01-01T00:00:00.000Z', topic: 'build', kind: 'project', text: 'x' } as const;
    other.restore({ events: [event], used: memory.used() });
    expect(other.events()).toEqual([event]);
    expect(other.used()).toEqual(memory.used());
  });
});

describe('ProjectMemory: startup index', () => {
  it('is empty without a file', async () => {
    expect(await memory.startupIndex()).toMatchObject({ text: '', truncated: false, lines: 0, bytes: 0 });
  });

  it('keeps the first 200 lines and reports the cut', async () => {
    await mkdir(memoryDir(), { recursive: true });
    const lines = Array.from({ length: 250 }, (_, index) => `- [project] t: fact ${index}`);
    await writeFile(join(memoryDir(), 'MEMORY.md'), `${lines.join('\n')}\n`, 'utf8');
    const index = await memory.startupIndex();
    expect(index).toMatchObject({ truncated: true, lines: 200, totalLines: 250 });
    expect(index.text.split('\n').at(-1)).toBe('- [project] t: fact 199');
  });

  it('keeps at most 25 KB, cut at a line end', async () => {
    await mkdir(memoryDir(), { recursive: true });
    const line = `- [project] t: ${'é'.repeat(200)}`; // 416 bytes
    await writeFile(join(memoryDir(), 'MEMORY.md'), Array.from({ length: 100 }, () => line).join('\n'), 'utf8');
    const index = await memory.startupIndex();
    expect(index.truncated).toBe(true);
    expect(index.bytes).toBeLessThanOrEqual(25 * 1024);
    expect(index.text.endsWith('é')).toBe(true);
    expect(index.lines).toBe(Math.floor((25 * 1024 + 1) / (Buffer.byteLength(line) + 1)));
  });

  it('is not truncated under the caps, and takes custom caps', async () => {
    await memory.append({ kind: 'project', topic: 'a', text: 'one' });
    expect(await memory.startupIndex()).toMatchObject({ truncated: false, lines: 3 });
    expect(await memory.startupIndex({ maxLines: 1 })).toMatchObject({ truncated: true, lines: 1, text: '# Project Memory' });
  });
});
