import { initialTaskState, type IBackgroundTaskState, type TBackgroundTaskEvent } from '@tessera/plugin-background';
import { describe, expect, it } from 'vitest';
import { snapshotEvent } from './task-lifecycle.js';
import { eventArg } from './task-store.js';
import { freezeInPlace, TaskMirror } from './task-mirror.js';

/** What the create and commit scripts put in the stream for `eventArg`'s argument (`expandEvent`). */
const eventJson = (event: TBackgroundTaskEvent, state: IBackgroundTaskState, stateJson: string): string => {
  const arg = eventArg(event, state);
  return arg.charCodeAt(0) === 1 ? `${arg.slice(1)}${stateJson}}` : arg;
};

const state = (): IBackgroundTaskState => {
  const created = initialTaskState('bg_1', { kind: 'agent', agentType: 'noop', prompt: 'p', cwd: '/', metadata: { team: 'a', n: 1 } }, 1, { team: 'a', n: 1 }, 1_000);
  created.error = { code: 'x', message: 'y' } as IBackgroundTaskState['error'];
  return created;
};

describe('eventArg (the stream text the scripts write)', () => {
  it('gives exactly JSON.stringify(event), reusing the state JSON only when the snapshot equals the state', () => {
    const current = state();
    const stateJson = JSON.stringify(current);
    const same = snapshotEvent('background_task_created', current);
    expect(eventJson(same, current, stateJson)).toBe(JSON.stringify(same));
    // A snapshot taken before a change: serialised on its own.
    const before = snapshotEvent('background_task_started', current);
    current.status = 'running';
    current.updatedAt = 2_000;
    const after = snapshotEvent('background_task_completed', current);
    const nowJson = JSON.stringify(current);
    expect(eventJson(before, current, nowJson)).toBe(JSON.stringify(before));
    expect(eventJson(before, current, nowJson)).not.toContain('"running"');
    expect(eventJson(after, current, nowJson)).toBe(JSON.stringify(after));
    // Nested records compared by value; a different one falls back.
    const changed = snapshotEvent('background_task_updated', current);
    (changed as { task: IBackgroundTaskState }).task.metadata = { team: 'b', n: 1 };
    expect(eventJson(changed, current, nowJson)).toBe(JSON.stringify(changed));
    expect(eventJson(changed, current, nowJson)).toContain('"team":"b"');
    // Extra event fields, or a field order that differs: the plain serialisation.
    const extra = { ...snapshotEvent('background_task_updated', current), note: 'n' } as unknown as TBackgroundTaskEvent;
    expect(eventJson(extra, current, nowJson)).toBe(JSON.stringify(extra));
    const { id, ...rest } = current;
    const reordered = { type: 'background_task_updated', taskId: id, task: { ...rest, id } } as unknown as TBackgroundTaskEvent;
    expect(eventJson(reordered, current, nowJson)).toBe(JSON.stringify(reordered));
  });

  it('falls back when a nested record holds an object itself', () => {
    const current = state();
    (current.error as unknown as Record<string, unknown>).details = { deep: true };
    const event = snapshotEvent('background_task_updated', current);
    (event as { task: IBackgroundTaskState }).task = { ...current, error: { ...current.error!, details: { deep: false } } as IBackgroundTaskState['error'] };
    expect(eventJson(event, current, JSON.stringify(current))).toBe(JSON.stringify(event));
  });
});

describe('TaskMirror with frozen snapshots', () => {
  it('keeps a frozen snapshot as it is and hands out copies that may be changed', () => {
    const mirror = new TaskMirror();
    const parsed = JSON.parse(JSON.stringify(state())) as IBackgroundTaskState;
    const frozen = freezeInPlace(parsed);
    expect(Object.isFrozen(frozen) && Object.isFrozen(frozen.metadata) && Object.isFrozen(frozen.error)).toBe(true);
    expect(() => {
      (frozen as IBackgroundTaskState).status = 'failed';
    }).toThrow(TypeError);
    mirror.loadFrozen(frozen, 2);
    const copy = mirror.get('bg_1')!;
    copy.status = 'failed';
    copy.metadata.team = 'z';
    expect(mirror.get('bg_1')).toMatchObject({ status: 'queued', metadata: { team: 'a' } });
    // An older version never replaces a newer one.
    mirror.loadFrozen(freezeInPlace({ ...parsed, metadata: { ...parsed.metadata }, status: 'running' } as IBackgroundTaskState), 1);
    expect(mirror.get('bg_1')?.status).toBe('queued');
  });

  it('eventArg sends a snapshot of the written state as a marked head (the script appends the state), anything else whole', () => {
    const current = state();
    const stateJson = JSON.stringify(current);
    const same = snapshotEvent('background_task_created', current);
    const arg = eventArg(same, current);
    expect(arg.charCodeAt(0)).toBe(1);
    expect(`${arg.slice(1)}${stateJson}}`).toBe(JSON.stringify(same));
    const other = { type: 'background_task_text_delta', taskId: 'bg_1', delta: 'x' } as TBackgroundTaskEvent;
    expect(eventArg(other, current)).toBe(JSON.stringify(other));
    const before = snapshotEvent('background_task_started', current);
    current.status = 'running';
    expect(eventArg(before, current)).toBe(JSON.stringify(before));
  });
});
