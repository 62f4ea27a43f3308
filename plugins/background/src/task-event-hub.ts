import { describeError, processWarningDiagnostics, type DiagnosticsReporter } from '@tessera/contracts';
import type { TBackgroundTaskEvent, TBackgroundTaskEventListener } from './types.js';

export type TTaskSnapshotEventType = Extract<TBackgroundTaskEvent, { task: unknown }>['type'];

export type TBackgroundTaskErrorReporter = (error: unknown, context: { taskId?: string; phase: string }) => void;

/**
 * Delivers manager events to the constructor sink and the subscribers. A throwing listener
 * is reported and skipped: one bad subscriber never breaks the manager or the others.
 */
export class TaskEventHub {
  private readonly listeners = new Set<TBackgroundTaskEventListener>();

  constructor(
    private readonly sink: TBackgroundTaskEventListener | undefined,
    private readonly onError: TBackgroundTaskErrorReporter | undefined,
    /** Where errors go when there is no `onError` (default: Node process warnings). */
    private readonly diagnostics: DiagnosticsReporter = processWarningDiagnostics,
  ) {}

  /** False when nobody listens, so the manager can skip building snapshots. */
  get active(): boolean {
    return this.sink !== undefined || this.listeners.size > 0;
  }

  subscribe(listener: TBackgroundTaskEventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  dispatch(event: TBackgroundTaskEvent): void {
    if (this.sink) this.deliver(this.sink, event);
    for (const listener of this.listeners) this.deliver(listener, event);
  }

  report(error: unknown, taskId: string | undefined, phase: string): void {
    if (this.onError) {
      try {
        this.onError(error, { ...(taskId === undefined ? {} : { taskId }), phase });
      } catch {
        // The error reporter itself failed; nothing is left to tell.
      }
      return;
    }
    try {
      this.diagnostics.report({
        severity: 'warning',
        code: 'TESSERA_BACKGROUND_TASK',
        source: 'background',
        message: `Background task ${taskId ?? '-'} (${phase}): ${describeError(error)}`,
      });
    } catch {
      // The reporter itself failed; nothing is left to tell.
    }
  }

  private deliver(listener: TBackgroundTaskEventListener, event: TBackgroundTaskEvent): void {
    try {
      listener(event);
    } catch (error) {
      this.report(error, event.taskId, `listener for ${event.type}`);
    }
  }
}
