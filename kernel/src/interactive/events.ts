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
  tool_start: (state: IToolState) => void;
  tool_end: (state: IToolState) => void;
  complete: (result: IExecutionResult) => void;
  error: (error: Error) => void;
  context_update: (state: IContextWindowState & { autoCompactThreshold: number | false }) => void;
  /** The abort completed; the result holds what the turn produced before it. */
  interrupted: (result: IExecutionResult) => void;
  prompt_file_reference: (event: { prompt: string; references: readonly IPromptFileReferenceRecord[] }) => void;
  background_task_event: (event: BackgroundTaskNotice) => void;
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

  emit<K extends keyof InteractiveSessionEvents>(name: K, ...args: Parameters<InteractiveSessionEvents[K]>): void {
    const list = this.listeners.get(name);
    if (!list) return;
    for (const listener of list) {
      try {
        (listener as (...values: unknown[]) => void)(...args);
      } catch (error) {
        this.listenerError(name, error);
      }
    }
  }
}
