import { cloneTaskState, type IBackgroundTaskState } from '@tessera/plugin-background';

/**
 * This process's copy of the queue's tasks, fed by the event stream. A snapshot only replaces
 * an older version, so a replayed event never rolls a task back; a closed task's version is
 * remembered so a late snapshot does not bring it back.
 */
export class TaskMirror {
  private readonly states = new Map<string, { state: IBackgroundTaskState; version: number }>();
  private readonly closed = new Map<string, number>();

  load(state: IBackgroundTaskState, version: number): void {
    const known = this.states.get(state.id)?.version ?? this.closed.get(state.id) ?? 0;
    if (version <= known) return;
    this.states.set(state.id, { state: cloneTaskState(state), version });
  }

  /**
   * `load` for a snapshot no one may change (a frozen event task, see `freezeInPlace`): kept as
   * it is, without a copy. `get` and `all` still hand out copies.
   */
  loadFrozen(state: Readonly<IBackgroundTaskState>, version: number): void {
    const known = this.states.get(state.id)?.version ?? this.closed.get(state.id) ?? 0;
    if (version <= known) return;
    this.states.set(state.id, { state, version });
  }

  delete(taskId: string, version = Number.MAX_SAFE_INTEGER): void {
    this.states.delete(taskId);
    this.closed.set(taskId, version);
  }

  get(taskId: string): IBackgroundTaskState | undefined {
    const entry = this.states.get(taskId);
    return entry ? cloneTaskState(entry.state) : undefined;
  }

  all(): IBackgroundTaskState[] {
    return [...this.states.values()].map((entry) => cloneTaskState(entry.state));
  }
}

/**
 * Freezes a task snapshot that was just parsed (nothing else holds it), with its nested records,
 * so it can be shared by the mirror and every listener as the in-process runtime shares its
 * frozen event snapshots.
 */
export function freezeInPlace(state: IBackgroundTaskState): Readonly<IBackgroundTaskState> {
  Object.freeze(state.metadata);
  if (state.error) Object.freeze(state.error);
  if (state.resultMetadata) Object.freeze(state.resultMetadata);
  return Object.freeze(state);
}
