import {
  AsyncSeriesBailHook,
  AsyncSeriesHook,
  AsyncSeriesWaterfallHook,
  SyncHook,
} from 'tapable';
import type {
  AfterProviderResponseContext,
  BeforeProviderRequestContext,
  CompactContext,
  ContextUpdateContext,
  HistoryAppendContext,
  HistoryResetContext,
  KernelLifecycleContext,
  NotificationContext,
  ObserverErrorContext,
  PostToolUseContext,
  PreToolUseContext,
  PreToolUseDecision,
  ProviderRawPayloadContext,
  SessionEndContext,
  SessionStartContext,
  StopContext,
  StopDecision,
  StopFailureContext,
  SubagentContext,
  TextDeltaContext,
  UserPromptSubmitContext,
  WorktreeContext,
} from '@tessera/contracts';
import { applyContinueDecisions, isolateObserver, mergePartialResults } from './tap-wrappers.js';
import { Stage } from './stage.js';

/** Waterfall taps return the fields they change (or nothing); the kernel merges them. */
type Waterfall<C> = AsyncSeriesWaterfallHook<[C], Partial<C> | void>;

/**
 * Every lifecycle hook of a kernel, in one frozen object. One context object per hook.
 * Error policy: a tap below `Stage.Observe` that throws fails the operation it guards
 * (the Session turns a failing `preToolUse` into a failed tool result); observer taps
 * are isolated.
 */
export interface TesseraHooks {
  /** Kernel lifecycle. */
  readonly boot: AsyncSeriesHook<[KernelLifecycleContext]>;
  readonly ready: AsyncSeriesHook<[KernelLifecycleContext]>;
  readonly shutdown: AsyncSeriesHook<[KernelLifecycleContext]>;
  /** Once per session. */
  readonly sessionStart: AsyncSeriesHook<[SessionStartContext]>;
  readonly sessionEnd: AsyncSeriesHook<[SessionEndContext]>;
  /** Before each turn; may rewrite the prompt, add context or block it. */
  readonly userPromptSubmit: Waterfall<UserPromptSubmitContext>;
  /** Before each model call; may replace the request. */
  readonly beforeProviderRequest: Waterfall<BeforeProviderRequestContext>;
  /** After each model call, once the reply is in history. */
  readonly afterProviderResponse: AsyncSeriesHook<[AfterProviderResponseContext]>;
  /**
   * Each streamed text chunk. Keep taps cheap: this is the hottest hook. The context object is
   * reused for every chunk of a run: copy `delta` out if you keep it, never the object.
   */
  readonly textDelta: SyncHook<[TextDeltaContext]>;
  /** Each provider-native payload a provider reports (requests, stream events, responses). */
  readonly providerRawPayload: SyncHook<[ProviderRawPayloadContext]>;
  /** Before each tool call; the first decision wins. */
  readonly preToolUse: AsyncSeriesBailHook<[PreToolUseContext], PreToolUseDecision | void>;
  /** After a tool ran and succeeded / failed; may replace the result. */
  readonly postToolUse: Waterfall<PostToolUseContext>;
  readonly postToolUseFailure: Waterfall<PostToolUseContext>;
  readonly preCompact: AsyncSeriesHook<[CompactContext]>;
  readonly postCompact: AsyncSeriesHook<[CompactContext]>;
  /** End of a successful turn; a tap may ask the model to continue. */
  readonly stop: AsyncSeriesBailHook<[StopContext], StopDecision | void>;
  /** A turn failed (provider error, timeout, hook error). Not fired for abort. */
  readonly stopFailure: AsyncSeriesHook<[StopFailureContext]>;
  /** Context-window estimate changed. */
  readonly contextUpdate: SyncHook<[ContextUpdateContext]>;
  /** An entry was appended to a session's history. */
  readonly historyAppend: SyncHook<[HistoryAppendContext]>;
  /** A session's history was emptied (clear or compaction); appends that follow rebuild it. */
  readonly historyReset: SyncHook<[HistoryResetContext]>;
  readonly subagentStart: AsyncSeriesHook<[SubagentContext]>;
  readonly subagentStop: AsyncSeriesHook<[SubagentContext]>;
  readonly worktreeCreate: AsyncSeriesHook<[WorktreeContext]>;
  readonly worktreeRemove: AsyncSeriesHook<[WorktreeContext]>;
  readonly notification: AsyncSeriesHook<[NotificationContext]>;
  /** An observer tap threw. Taps here must not throw. */
  readonly observerError: SyncHook<[ObserverErrorContext]>;
}

/** The name of one hook of {@link TesseraHooks} (`preToolUse`, `stop`, …). */
export type HookName = keyof TesseraHooks;

const WATERFALL_HOOKS: ReadonlySet<HookName> = new Set([
  'userPromptSubmit',
  'beforeProviderRequest',
  'postToolUse',
  'postToolUseFailure',
]);

/** Creates a fresh, frozen hooks object. Each kernel (and each kernel-less Session) owns one. */
export function createHooks(): TesseraHooks {
  const observerError = new SyncHook<[ObserverErrorContext]>(['context'], 'observerError');
  const hooks: TesseraHooks = {
    boot: new AsyncSeriesHook(['context'], 'boot'),
    ready: new AsyncSeriesHook(['context'], 'ready'),
    shutdown: new AsyncSeriesHook(['context'], 'shutdown'),
    sessionStart: new AsyncSeriesHook(['context'], 'sessionStart'),
    sessionEnd: new AsyncSeriesHook(['context'], 'sessionEnd'),
    userPromptSubmit: new AsyncSeriesWaterfallHook(['context'], 'userPromptSubmit'),
    beforeProviderRequest: new AsyncSeriesWaterfallHook(['context'], 'beforeProviderRequest'),
    afterProviderResponse: new AsyncSeriesHook(['context'], 'afterProviderResponse'),
    textDelta: new SyncHook(['context'], 'textDelta'),
    providerRawPayload: new SyncHook(['context'], 'providerRawPayload'),
    preToolUse: new AsyncSeriesBailHook(['context'], 'preToolUse'),
    postToolUse: new AsyncSeriesWaterfallHook(['context'], 'postToolUse'),
    postToolUseFailure: new AsyncSeriesWaterfallHook(['context'], 'postToolUseFailure'),
    preCompact: new AsyncSeriesHook(['context'], 'preCompact'),
    postCompact: new AsyncSeriesHook(['context'], 'postCompact'),
    stop: new AsyncSeriesBailHook(['context'], 'stop'),
    stopFailure: new AsyncSeriesHook(['context'], 'stopFailure'),
    contextUpdate: new SyncHook(['context'], 'contextUpdate'),
    historyAppend: new SyncHook(['context'], 'historyAppend'),
    historyReset: new SyncHook(['context'], 'historyReset'),
    subagentStart: new AsyncSeriesHook(['context'], 'subagentStart'),
    subagentStop: new AsyncSeriesHook(['context'], 'subagentStop'),
    worktreeCreate: new AsyncSeriesHook(['context'], 'worktreeCreate'),
    worktreeRemove: new AsyncSeriesHook(['context'], 'worktreeRemove'),
    notification: new AsyncSeriesHook(['context'], 'notification'),
    observerError,
  };

  const report = (context: ObserverErrorContext): void => {
    if (observerError.taps.length === 0) {
      process.emitWarning(
        `Observer tap "${context.tap}" on hook "${context.hook}" threw: ${String(
          (context.error as Error)?.stack ?? context.error,
        )}`,
        { code: 'TESSERA_OBSERVER_ERROR' },
      );
      return;
    }
    try {
      observerError.call(context);
    } catch {
      // observerError taps must not throw; nothing sensible is left to report to.
    }
  };

  for (const [name, hook] of Object.entries(hooks) as Array<[HookName, TesseraHooks[HookName]]>) {
    if (name === 'observerError') continue;
    const merges = WATERFALL_HOOKS.has(name);
    hook.intercept({
      name: 'tessera-kernel',
      register(tap) {
        let wrapped = tap;
        if (merges) wrapped = mergePartialResults(wrapped);
        if (name === 'preToolUse') wrapped = applyContinueDecisions(wrapped);
        if ((tap.stage ?? 0) >= Stage.Observe) wrapped = isolateObserver(wrapped, name, report);
        return wrapped;
      },
    });
  }
  return Object.freeze(hooks);
}

/**
 * A session's own copy of the kernel's hooks: it starts with every kernel tap (already
 * wrapped, so nothing is wrapped twice) and takes taps of its own that no other session sees.
 * Taps the kernel gains afterwards do not reach the copy.
 */
export function forkHooks(base: TesseraHooks): TesseraHooks {
  const fork = createHooks();
  for (const name of Object.keys(base) as HookName[]) {
    (fork[name].taps as unknown[]).push(...base[name].taps);
  }
  return fork;
}

/** True when at least one tap listens; lets hot paths skip building a context object. */
export function isTapped(hook: { taps: readonly unknown[] }): boolean {
  return hook.taps.length > 0;
}
