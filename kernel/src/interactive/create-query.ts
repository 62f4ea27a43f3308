import {
  describeError,
  isAbortError,
  modelPrice,
  Provider,
  usageCostUsd,
  type IContextWindowState,
  type IExecutionResult,
  type IPromptFileReferenceRecord,
  type IToolState,
  type IUsageSnapshot,
  copyWith,
} from '@tessera/contracts';
import { createKernel, type Kernel } from '../kernel.js';
import { definePlugin, type PluginInput } from '../plugin.js';
import { InteractiveSession, type InteractiveSessionOptions } from './interactive-session.js';

/** What `createQuery` takes: the prompt, a kernel (or plugins to compose one) and the interactive session options. */
export interface CreateQueryOptions extends Omit<InteractiveSessionOptions, 'session' | 'kernel' | 'resumeSessionId'> {
  prompt: string;
  /** The composed application. Without one, a kernel is composed from `plugins` (and `provider`) for this query and shut down after it. */
  kernel?: Kernel;
  plugins?: readonly PluginInput[];
  /** Continue this stored session instead of starting a new one. */
  sessionId?: string;
  /** Aborts the query; the last message is then a `result` with subtype `interrupted`. */
  signal?: AbortSignal;
}

/** What `createQuery` yields: the interactive session's events, then one `result`. */
export type QueryMessage =
  | { type: 'text_delta'; delta: string }
  | { type: 'thinking_delta'; delta: string }
  | { type: 'tool_start'; tool: IToolState }
  | { type: 'tool_end'; tool: IToolState }
  | { type: 'context_update'; state: IContextWindowState }
  | { type: 'prompt_file_reference'; references: readonly IPromptFileReferenceRecord[] }
  | {
      type: 'result';
      subtype: 'success' | 'error' | 'interrupted';
      /** The final assistant text (what was produced before an abort or error). */
      text: string;
      usage?: IUsageSnapshot;
      /**
       * Cost in USD at list prices (`usageCostUsd` in @tessera/contracts), when every model call
       * reported usage from a model whose price is known; absent otherwise.
       */
      costUsd?: number;
      /** Model calls the turn made. */
      turns: number;
      durationMs: number;
      sessionId: string;
      /** For `error`: what failed. */
      error?: { message: string; code?: string };
    };

/**
 * One prompt, start to finish (spec: createQuery): `for await (const message of
 * createQuery({ prompt, kernel }))` yields text deltas, tool states and context updates as
 * they happen, then a `result`. The permission mode is `default` unless given — never bypass.
 * One new session per call, unless `sessionId` names a stored one to continue.
 */
export async function* createQuery(options: CreateQueryOptions): AsyncGenerator<QueryMessage, void, undefined> {
  const started = Date.now();
  const { prompt, kernel: given, plugins, sessionId, signal, ...rest } = options;
  const kernel = given ?? (await composeKernel(plugins ?? [], rest.provider));
  const session = new InteractiveSession(copyWith(rest, {
    kernel,
    permissionMode: rest.permissionMode ?? 'default',
    ...(sessionId === undefined ? {} : { resumeSessionId: sessionId }),
  }));

  const queue: QueryMessage[] = [];
  let wake: (() => void) | undefined;
  const push = (message: QueryMessage): void => {
    queue.push(message);
    wake?.();
  };
  const off = [
    session.on('text_delta', (delta) => push({ type: 'text_delta', delta })),
    session.on('thinking_delta', (delta) => push({ type: 'thinking_delta', delta })),
    session.on('tool_start', (tool) => push({ type: 'tool_start', tool })),
    session.on('tool_end', (tool) => push({ type: 'tool_end', tool })),
    session.on('context_update', (state) => push({ type: 'context_update', state })),
    session.on('prompt_file_reference', (event) => push({ type: 'prompt_file_reference', references: event.references })),
  ];
  const onAbort = (): void => session.abort();
  let turns = 0;
  // Summed per model call; unknown as soon as one call has no usage or no known price.
  let cost: number | undefined = 0;
  let done = false;
  try {
    try {
      await session.whenReady();
    } catch (error) {
      // A session that could not be set up (an unknown sessionId, a system prompt or sandbox
      // that failed) ends the query like any failure: with an error result, not a throw.
      const code = (error as { code?: unknown }).code;
      yield {
        type: 'result',
        subtype: 'error',
        text: '',
        turns: 0,
        durationMs: Date.now() - started,
        sessionId: session.getSessionId() || (sessionId ?? ''),
        error: { message: describeError(error), ...(typeof code === 'string' ? { code } : {}) },
      };
      return;
    }
    const kernelSession = session.getSession();
    const unsubscribeTurns = kernelSession.subscribe((event) => {
      if (event.type !== 'assistant_message') return;
      turns += 1;
      if (cost === undefined) return;
      const { usage, model } = event.message;
      // Priced by the model that answered; a gateway's own name falls back to the one asked for.
      const asked = kernelSession.getModel();
      const priced = usage && ((model !== undefined && modelPrice(model) !== undefined) || asked === undefined ? model : asked);
      const added = usage && priced !== undefined ? usageCostUsd(priced, usage) : undefined;
      cost = added === undefined ? undefined : cost + added;
    });
    off.push(unsubscribeTurns);
    if (signal?.aborted) session.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (subtype: 'success' | 'error' | 'interrupted', result: IExecutionResult | undefined, error?: unknown): void => {
      const code = (error as { code?: unknown } | undefined)?.code;
      push({
        type: 'result',
        subtype,
        text: result?.response ?? session.getStreamingText(),
        ...(result?.usage ? { usage: result.usage } : {}),
        ...(cost !== undefined && turns > 0 ? { costUsd: cost } : {}),
        turns,
        durationMs: Date.now() - started,
        sessionId: session.getSessionId(),
        ...(error === undefined ? {} : { error: { message: describeError(error), ...(typeof code === 'string' ? { code } : {}) } }),
      });
      done = true;
    };
    let interrupted: IExecutionResult | undefined;
    off.push(session.on('interrupted', (result) => (interrupted = result)));
    const running = signal?.aborted
      ? Promise.resolve(finish('interrupted', undefined))
      : session.submit(prompt).then(
          (result) => finish(interrupted ? 'interrupted' : 'success', result ?? interrupted),
          (error: unknown) => finish(isAbortError(error) ? 'interrupted' : 'error', interrupted, error),
        );
    for (;;) {
      while (queue.length > 0) {
        const message = queue.shift()!;
        yield message;
        if (message.type === 'result') return;
      }
      if (done && queue.length === 0) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (queue.length > 0 || done) resolve();
      });
      wake = undefined;
    }
    await running;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    for (const unsubscribe of off) unsubscribe();
    await session.shutdown();
    if (!given) await kernel.shutdown();
  }
}

async function composeKernel(plugins: readonly PluginInput[], provider: Provider | undefined): Promise<Kernel> {
  const extra = provider
    ? [
        definePlugin({
          name: 'query-provider',
          provides: [Provider],
          register: ({ bind }) => void bind(Provider).toConstantValue(provider),
        }),
      ]
    : [];
  return createKernel({ plugins: [...plugins, ...extra] });
}
