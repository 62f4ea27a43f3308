import { describe, expect, it } from 'vitest';
import { isAbortError, type AssistantMessage, type Message, type Provider, type ProviderRequest } from '@tessera/contracts';
import { ManualProvider } from '@tessera/kernel/testing';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { CompactionFailedError, CompactionOrchestrator, NothingToCompactError } from './compaction-orchestrator.js';
import { COMPACTION_SYSTEM_PROMPT, middleTruncate, renderTranscript } from './compaction-prompt.js';

const conversation: Message[] = [
  { role: 'system', content: 'SYSTEM-PROMPT-TEXT' },
  { role: 'user', content: 'fix the build in src/app.ts' },
  { role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', id: 't1', name: 'Read', input: { path: 'src/app.ts' } }], state: 'complete' },
  { role: 'tool', content: [{ type: 'tool_result', toolUseId: 't1', toolName: 'Read', content: 'export const x = 1', isError: false }] },
];
const request = (overrides: Partial<Parameters<CompactionOrchestrator['compact']>[0]> = {}) => ({
  messages: conversation,
  trigger: 'manual' as const,
  signal: new AbortController().signal,
  ...overrides,
});

describe('CompactionOrchestrator', () => {
  it('asks the provider for a summary with its own prompt, a transcript and no tools', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: ['  The user wants ', 'the build fixed.  '] }] });
    const orchestrator = new CompactionOrchestrator({ provider, model: 'cheap-model' });
    expect(await orchestrator.compact(request({ instructions: 'Focus on file paths.' }))).toEqual({ summary: 'The user wants the build fixed.' });
    const sent = provider.requests[0]!;
    expect(sent.system).toBe(COMPACTION_SYSTEM_PROMPT);
    expect(sent.tools).toEqual([]);
    expect(sent.model).toBe('cheap-model');
    expect(sent.messages).toHaveLength(1);
    const prompt = sent.messages[0]!.content as string;
    expect(prompt).toContain('fix the build in src/app.ts');
    expect(prompt).toContain('(calls tool Read {"path":"src/app.ts"})');
    expect(prompt).toContain('[tool result: Read]\nexport const x = 1');
    expect(prompt).toContain('Focus on file paths.');
    expect(prompt).not.toContain('SYSTEM-PROMPT-TEXT');
  });

  it('uses compactInstructions when the request has none, and a custom system prompt', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'ok' }] });
    await new CompactionOrchestrator({ provider, compactInstructions: 'Keep TODOs.', systemPrompt: 'S' }).compact(request());
    expect(provider.requests[0]!.system).toBe('S');
    expect(provider.requests[0]!.messages[0]!.content).toContain('Keep TODOs.');
  });

  it('does not request a summary when there is nothing to summarise', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'never' }] });
    const orchestrator = new CompactionOrchestrator({ provider });
    await expect(orchestrator.compact(request({ messages: [{ role: 'system', content: 's' }] }))).rejects.toBeInstanceOf(NothingToCompactError);
    await expect(orchestrator.compact(request({ messages: [] }))).rejects.toMatchObject({ code: 'nothing_to_compact' });
    expect(provider.callCount).toBe(0);
  });

  it('rejects (never a placeholder) when the call fails, the summary is empty or refused', async () => {
    const failing = new CompactionOrchestrator({ provider: new ScriptedProvider({ turns: [{ error: 'overloaded' }] }) });
    const error = await failing.compact(request()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CompactionFailedError);
    expect(error).toMatchObject({ code: 'compaction_failed', recoverable: true, message: expect.stringContaining('overloaded') });
    const empty = new CompactionOrchestrator({ provider: new ScriptedProvider({ turns: [{ text: '   ' }] }) });
    await expect(empty.compact(request())).rejects.toThrow(/empty summary/);
    const refusing: Provider = {
      name: 'refuser',
      stream: async () => ({ role: 'assistant', content: [{ type: 'text', text: 'no' }], state: 'complete', stopReason: 'refusal' }),
    };
    await expect(new CompactionOrchestrator({ provider: refusing }).compact(request())).rejects.toThrow(/refusal/);
  });

  it('honours abort before and during the summary call', async () => {
    const unused = new ScriptedProvider({ turns: [{ text: 'x' }] });
    const controller = new AbortController();
    controller.abort();
    const before = await new CompactionOrchestrator({ provider: unused }).compact(request({ signal: controller.signal })).catch((e: unknown) => e);
    expect(isAbortError(before)).toBe(true);
    expect(unused.callCount).toBe(0);

    for (const mode of ['resolve', 'reject'] as const) {
      const manual = new ManualProvider(mode);
      const during = new AbortController();
      const pending = new CompactionOrchestrator({ provider: manual }).compact(request({ signal: during.signal })).catch((e: unknown) => e);
      const call = await manual.waitForCall();
      call.delta('partial summ');
      during.abort();
      expect(isAbortError(await pending)).toBe(true);
    }
  });

  it('treats an interrupted reply as aborted even if the signal is not', async () => {
    const provider: Provider = {
      name: 'cut',
      stream: async (_request: ProviderRequest): Promise<AssistantMessage> => ({ role: 'assistant', content: [{ type: 'text', text: 'half' }], state: 'interrupted' }),
    };
    expect(isAbortError(await new CompactionOrchestrator({ provider }).compact(request()).catch((e: unknown) => e))).toBe(true);
  });

  it('needs a provider: its own, or the one the request carries', async () => {
    expect(() => new CompactionOrchestrator({ provider: {} as never })).toThrow(/needs a Provider/);
    const orchestrator = new CompactionOrchestrator({});
    const request = { messages: [{ role: 'user' as const, content: 'hi' }], trigger: 'manual' as const, signal: new AbortController().signal };
    await expect(orchestrator.compact(request)).rejects.toMatchObject({ code: 'invalid_compaction_option' });
    const provider = new ScriptedProvider({ turns: [{ text: 'from the request' }] });
    await expect(orchestrator.compact({ ...request, provider, model: 'request-model' })).resolves.toEqual({ summary: 'from the request' });
    expect(provider.requests[0]!.model).toBe('request-model');
  });
});

describe('transcript', () => {
  it('middle-truncates long blocks and marks interrupted replies and tool errors', () => {
    expect(middleTruncate('abcdefghij', 4)).toBe('ab\n[… 6 characters omitted …]\nij');
    expect(middleTruncate('short', 10)).toBe('short');
    const text = renderTranscript(
      [
        { role: 'assistant', content: [{ type: 'text', text: 'x'.repeat(100) }], state: 'interrupted' },
        { role: 'tool', content: [{ type: 'tool_result', toolUseId: 'a', toolName: 'Bash', content: [{ type: 'text', text: 'boom' }], isError: true }] },
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', data: 'AAAA', mediaType: 'image/png' }] },
      ],
      { maxBlockChars: 15 },
    );
    expect(text).toContain('[assistant (interrupted)]\nxxxxxxx\n[… 86 characters omitted …]');
    expect(text).toContain('[tool result: Bash, error]\nboom');
    expect(text).toContain('[user]\nlook\n(image)');
    expect(text).not.toContain('AAAA');
  });
});
