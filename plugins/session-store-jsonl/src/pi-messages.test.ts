import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureCorpus, realCorpus } from '../../../test/support/compat-corpus.js';
import type { Message } from '@tessera/contracts';
import { messageSchema } from '@tessera/contracts/schemas';
import { JsonlSessionStore } from './jsonl-session-store.js';
import { appendKernelMessage, fromPiMessage, toPiMessages } from './pi-messages.js';
import { recordFromSession } from './record-mapping.js';
import { SessionManager } from './session-manager.js';

/** pi files to convert, with the least each must yield; the real ones only when present. */
const piFiles = [
  { path: join(fixtureCorpus.root, 'pi-sessions', 'v1-two-compactions.jsonl'), minMessages: 8, minToolUses: 2 },
  { path: join(fixtureCorpus.root, 'pi-sessions', 'v2-branches.jsonl'), minMessages: 6, minToolUses: 1 },
  ...(realCorpus.present
    ? [
        { path: join(realCorpus.root, 'pi-sessions', 'large-session.jsonl'), minMessages: 100, minToolUses: 10 },
        { path: join(realCorpus.root, 'pi-sessions', 'before-compaction.jsonl'), minMessages: 100, minToolUses: 10 },
      ]
    : []),
];

const conversation: Message[] = [
  { role: 'system', content: 'rules' },
  { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', data: 'aGk=', mediaType: 'image/png' }] },
  {
    role: 'assistant',
    state: 'complete',
    stopReason: 'tool_use',
    provider: 'anthropic',
    model: 'claude-x',
    usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2 },
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'text', text: 'reading' },
      { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } },
      { type: 'tool_use', id: 't2', name: 'Read', input: { file_path: '/b' } },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool_result', toolUseId: 't1', toolName: 'Read', content: 'A', isError: false },
      { type: 'tool_result', toolUseId: 't2', toolName: 'Read', content: [{ type: 'text', text: 'missing' }], isError: true },
    ],
  },
  { role: 'assistant', state: 'interrupted', stopReason: 'aborted', content: [{ type: 'text', text: 'half' }] },
  { role: 'assistant', state: 'complete', stopReason: 'refusal', content: [{ type: 'text', text: 'no' }] },
];

function roundTrip(messages: Message[]): Message[] {
  const result: Message[] = [];
  for (const message of messages) {
    for (const stored of toPiMessages(message, 1)) {
      const converted = fromPiMessage(JSON.parse(JSON.stringify(stored)))!;
      appendKernelMessage(result, converted, stored.role === 'toolResult');
    }
  }
  return result;
}

describe('pi message shapes', () => {
  it('writes what pi reads: toolCall blocks, one toolResult per call, mimeType images, pi usage', () => {
    const stored = conversation.flatMap((message) => toPiMessages(message, 7));
    expect(stored.map((message) => message.role)).toEqual(['custom', 'user', 'assistant', 'toolResult', 'toolResult', 'assistant', 'assistant']);
    expect(stored[1]!.content).toEqual([{ type: 'text', text: 'look' }, { type: 'image', data: 'aGk=', mimeType: 'image/png' }]);
    expect(stored[2]).toMatchObject({
      stopReason: 'toolUse',
      provider: 'anthropic',
      usage: { input: 10, output: 5, cacheRead: 2, cacheWrite: 0, totalTokens: 17 },
      content: [
        { type: 'thinking', thinking: 'hmm', thinkingSignature: 'sig' },
        { type: 'text', text: 'reading' },
        { type: 'toolCall', id: 't1', name: 'Read', arguments: { file_path: '/a' } },
        { type: 'toolCall', id: 't2', name: 'Read', arguments: { file_path: '/b' } },
      ],
    });
    expect(stored[3]).toEqual({ role: 'toolResult', toolCallId: 't1', toolName: 'Read', content: [{ type: 'text', text: 'A' }], isError: false, timestamp: 7 });
    expect(stored[5]).toMatchObject({ stopReason: 'aborted' });
  });

  it('reads back the same kernel messages', () => {
    const back = roundTrip(conversation);
    expect(back).toEqual([
      ...conversation.slice(0, 3),
      { ...conversation[3], content: [conversation[3]!.content[0], { ...(conversation[3] as { content: object[] }).content[1], content: 'missing' }] },
      ...conversation.slice(4),
    ]);
  });

  it('keeps a loaded text-only content array as the kernel content, and converts any other', () => {
    const userText = { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], timestamp: 1 };
    const replyText = { role: 'assistant', content: [{ type: 'text', text: 'c' }], provider: 'p', model: 'm', stopReason: 'stop', timestamp: 1 };
    expect((fromPiMessage(userText) as { content: unknown }).content).toBe(userText.content);
    expect((fromPiMessage(replyText) as { content: unknown }).content).toBe(replyText.content);
    // pi's text blocks may carry more (a signature); the kernel block is the two fields only.
    const signed = { role: 'assistant', content: [{ type: 'text', text: 'd', textSignature: 'sig' }], stopReason: 'stop', timestamp: 1 };
    const converted = fromPiMessage(signed) as { content: unknown[] };
    expect(converted.content).not.toBe(signed.content);
    expect(converted.content).toEqual([{ type: 'text', text: 'd' }]);
    const mixed = { role: 'user', content: [{ type: 'text', text: 'e' }, { type: 'image', data: 'aGk=', mimeType: 'image/png' }], timestamp: 1 };
    expect((fromPiMessage(mixed) as { content: unknown }).content).toEqual([{ type: 'text', text: 'e' }, { type: 'image', data: 'aGk=', mediaType: 'image/png' }]);
    const nonString = { role: 'user', content: [{ type: 'text', text: 5 }], timestamp: 1 };
    expect((fromPiMessage(nonString) as { content: unknown }).content).toEqual([{ type: 'text', text: '5' }]);
    // An own "__proto__" key (JSON.parse makes one) is a third key: converted, prototype untouched.
    const polluted = JSON.parse('{"role":"user","content":[{"type":"text","text":"f","__proto__":{"x":1}}],"timestamp":1}');
    const safe = fromPiMessage(polluted) as unknown as { content: Array<Record<string, unknown>> };
    expect(safe.content).toEqual([{ type: 'text', text: 'f' }]);
    expect(Object.getPrototypeOf(safe.content[0])).toBe(Object.prototype);
  });

  it(`turns pi sessions into valid, paired kernel messages (${piFiles.length} files${realCorpus.present ? '' : '; real-world corpus not found'})`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-pi-shapes-'));
    try {
      for (const [index, { path, minMessages, minToolUses }] of piFiles.entries()) {
        const file = join(dir, `${index}.jsonl`);
        await copyFile(path, file);
        const manager = await SessionManager.open(file, { agentDir: join(dir, 'agent'), terminalId: null, onWarning: () => undefined });
        const { record } = recordFromSession(manager);
        expect(record.messages.length).toBeGreaterThanOrEqual(minMessages);
        const uses: string[] = [];
        const results: string[] = [];
        for (const message of record.messages) {
          expect(messageSchema.safeParse(message).success).toBe(true);
          if (message.role === 'assistant') for (const block of message.content) if (block.type === 'tool_use') uses.push(block.id);
          if (message.role === 'tool') for (const block of message.content) results.push(block.toolUseId);
        }
        expect(uses.length).toBeGreaterThanOrEqual(minToolUses);
        expect(new Set(results)).toEqual(new Set(uses.filter((id) => results.includes(id))));
        expect(results.every((id) => uses.includes(id))).toBe(true);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stores a kernel session in pi shapes on disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-pi-store-'));
    try {
      const store = new JsonlSessionStore({ agentDir: dir, terminalId: null });
      await store.save({ id: 'pi-shaped', cwd: '/proj', createdAt: 't', updatedAt: 't', messages: conversation.slice(1), history: [] });
      await store.close();
      const [info] = await SessionManager.listAll({ agentDir: dir, terminalId: null });
      const lines = (await readFile(info!.path, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
      const roles = lines.filter((line) => line.type === 'message').map((line) => line.message.role);
      expect(roles).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant', 'assistant']);
      expect((await new JsonlSessionStore({ agentDir: dir, terminalId: null }).load('pi-shaped'))!.messages).toEqual(roundTrip(conversation.slice(1)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
