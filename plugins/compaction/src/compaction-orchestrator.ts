import {
  createAbortError,
  describeError,
  isAbortError,
  messageText,
  TesseraError,
  type Compaction,
  type CompactionRequest,
  type CompactionResult,
  type Provider,
} from '@tessera/contracts';
import { buildCompactionPrompt, COMPACTION_SYSTEM_PROMPT, renderTranscript } from './compaction-prompt.js';

export interface CompactionOrchestratorOptions {
  /**
   * The model that writes the summary. Without one, each request's `provider` (the session's
   * current provider) is used.
   */
  provider?: Provider;
  /** Model id for the summary call (default: the request's model, else the provider's own). */
  model?: string;
  /** Replaces the built-in summariser system prompt. */
  systemPrompt?: string;
  /** Used when a request carries no instructions (e.g. a CLAUDE.md "Compact Instructions" section). */
  compactInstructions?: string;
  /** Each message block longer than this is middle-truncated in the transcript (default 20,000). */
  maxBlockChars?: number;
}

export class CompactionFailedError extends TesseraError {
  constructor(reason: string, cause?: unknown) {
    super(`Compaction failed: ${reason}. The conversation was left unchanged; retry, or continue without compacting.`, {
      code: 'compaction_failed',
      category: 'provider',
      recoverable: true,
      cause,
    });
  }
}

export class NothingToCompactError extends TesseraError {
  constructor() {
    super('Nothing to compact: the conversation has no user, assistant or tool messages. No summary was requested.', {
      code: 'nothing_to_compact',
      category: 'state',
      recoverable: true,
    });
  }
}

/**
 * Summarises a conversation with one extra model call (spec: CompactionOrchestrator).
 * Never returns a placeholder: a failed, empty or aborted summary rejects, so the Session
 * leaves history untouched. System messages are not summarised — the Session keeps them.
 */
export class CompactionOrchestrator implements Compaction {
  private readonly options: CompactionOrchestratorOptions;

  constructor(options: CompactionOrchestratorOptions) {
    if (options?.provider !== undefined && typeof options.provider?.stream !== 'function') {
      throw new TesseraError('CompactionOrchestrator needs a Provider (option "provider"); add a provider plugin before compaction().', {
        code: 'invalid_compaction_option',
        category: 'configuration',
        recoverable: false,
        details: { field: 'provider' },
      });
    }
    this.options = options;
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { signal } = request;
    if (signal.aborted) throw createAbortError();
    const conversation = request.messages.filter((message) => message.role !== 'system');
    if (conversation.length === 0) throw new NothingToCompactError();

    const provider = this.options.provider ?? request.provider;
    if (provider === undefined) {
      throw new TesseraError('Compaction has no provider: give CompactionOrchestrator a "provider", or compact through a session (which passes its own).', {
        code: 'invalid_compaction_option',
        category: 'configuration',
        recoverable: false,
        details: { field: 'provider' },
      });
    }
    const instructions = request.instructions ?? this.options.compactInstructions;
    const transcript = renderTranscript(conversation, { maxBlockChars: this.options.maxBlockChars ?? 20_000 });
    let reply;
    try {
      reply = await provider.stream({
        system: this.options.systemPrompt ?? COMPACTION_SYSTEM_PROMPT,
        messages: [{ role: 'user', content: buildCompactionPrompt(transcript, instructions) }],
        tools: [],
        model: this.options.model ?? (this.options.provider === undefined ? request.model : undefined),
        signal,
      });
    } catch (error) {
      if (signal.aborted || isAbortError(error)) throw createAbortError();
      throw new CompactionFailedError(`the summary call to "${provider.name}" failed: ${describeError(error)}`, error);
    }
    if (signal.aborted || reply.state === 'interrupted') throw createAbortError();
    if (reply.stopReason === 'refusal' || reply.stopReason === 'error') {
      throw new CompactionFailedError(`the model ended the summary with stop reason "${reply.stopReason}"`);
    }
    const summary = messageText(reply).trim();
    if (summary === '') throw new CompactionFailedError('the model returned an empty summary');
    return { summary };
  }
}
