import type {
  BackgroundTaskNotice,
  IContextWindowState,
  IExecutionResult,
  IPromptFileReferenceRecord,
  ISkillActivationEvent,
  IToolState,
} from '@tessera/contracts';

/** The typed events of an `InteractiveSession` (spec: IInteractiveSessionEvents). */
export interface InteractiveSessionEvents {
  /** A chunk of the assistant's streamed text. */
  text_delta: (delta: string) => void;
  /** A chunk of the model's streamed reasoning. */
  thinking_delta: (delta: string) => void;
  /** `true` when a prompt starts executing, `false` when it ended (any way). */
  thinking: (isThinking: boolean) => void;
  /** A tool call started; `state` is a copy, yours to keep. */
  tool_start: (state: IToolState) => void;
  /** A tool call finished (success, error or denied); `state` is a copy, yours to keep. */
  tool_end: (state: IToolState) => void;
  /** A prompt finished successfully. */
  complete: (result: IExecutionResult) => void;
  /** A prompt failed; `submit` rejects with the same error. Not emitted for an abort (see `interrupted`). */
  error: (error: Error) => void;
  /** The context-window estimate changed, with the session's current auto-compaction threshold. */
  context_update: (state: IContextWindowState & { autoCompactThreshold: number | false }) => void;
  /** The abort completed; the result holds what the turn produced before it. */
  interrupted: (result: IExecutionResult) => void;
  /** `@file` references of a prompt were read and sent to the model. */
  prompt_file_reference: (event: { prompt: string; references: readonly IPromptFileReferenceRecord[] }) => void;
  /** A background task of this session (or of none) changed state; needs a bound `BackgroundTasks` with events. */
  background_task_event: (event: BackgroundTaskNotice) => void;
  /** A skill activation started, completed or failed. */
  skill_activation: (event: ISkillActivationEvent) => void;
}

type Listener = (...args: never[]) => void;

/**
 * Listeners per event name. A listener that throws is reported on the process's warning
 * channel (`listenerError`) and never stops the others or the turn.
 */
export class InteractiveEventEmitter {
  private readonly listeners = new Map<string, Listener[]>();

  constructor(private readonly listenerError: (name: string, error: unknown) => void) {}

  on<K extends keyof InteractiveSessionEvents>(name: K, listener: InteractiveSessionEvents[K]): () => void {
    const list = this.listeners.get(name) ?? [];
    this.listeners.set(name, [...list, listener as Listener]);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.listeners.set(
        name,
        (this.listeners.get(name) ?? []).filter((candidate) => candidate !== listener),
      );
    };
  }

  /** Whether anything listens to `name` (checked before building an event on hot paths). */
  has(name: keyof InteractiveSessionEvents): boolean {
    const list = this.listeners.get(name);
    return list !== undefined && list.length > 0;
  }

  /** Calls each listener of `name` with `payload` (every event has exactly one). */
  emit<K extends keyof InteractiveSessionEvents>(name: K, payload: Parameters<InteractiveSessionEvents[K]>[0]): void {
    const list = this.listeners.get(name);
    if (list === undefined) return;
    // A listener that unsubscribes while called does not skip the next: `on` and its
    // unsubscribe replace the array instead of changing it.
    for (let index = 0; index < list.length; index += 1) {
      try {
        (list[index] as (value: unknown) => void)(payload);
      } catch (error) {
        this.listenerError(name, error);
      }
    }
  }
}
