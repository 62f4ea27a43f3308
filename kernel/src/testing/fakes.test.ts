import { describe, expect, it } from 'vitest';
import { FakeClock } from './fake-clock.js';
import { InMemorySessionStore } from './in-memory-session-store.js';
import { RecordingApprovalHandler } from './permission-fakes.js';

describe('FakeClock', () => {
  it('fires due timers in time order, including ones set while advancing', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => {
      fired.push(`b@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 5);
    }, 20);
    const cancelled = clock.setTimeout(() => fired.push('never'), 15);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.clearTimeout(cancelled);
    clock.advance(30);
    expect(fired).toEqual(['a@10', 'b@20', 'c@25']);
    expect(clock.now()).toBe(30);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('InMemorySessionStore', () => {
  it('copies records in and out and lists newest first', () => {
    const store = new InMemorySessionStore();
    const record = { id: 'a', cwd: '/', createdAt: '2026-01-01', updatedAt: '2026-01-01', messages: [], history: [] };
    store.save(record);
    store.save({ ...record, id: 'b', updatedAt: '2026-02-01' });
    record.messages.push({ role: 'user', content: 'mutated' } as never);
    expect(store.load('a')!.messages).toEqual([]);
    const loaded = store.load('a')!;
    loaded.history.push({ id: 'x' } as never);
    expect(store.load('a')!.history).toEqual([]);
    expect(store.list().map((entry) => entry.id)).toEqual(['b', 'a']);
    store.delete('a');
    expect(store.load('a')).toBeUndefined();
    expect(() => store.save({ ...record, id: '' })).toThrow(/without an id/);
  });
});

describe('RecordingApprovalHandler', () => {
  it('records requests and rejects a pending answer on abort', async () => {
    const handler = new RecordingApprovalHandler(() => new Promise(() => {}));
    const controller = new AbortController();
    const pending = handler.requestApproval({ toolName: 'Bash', input: {}, sessionId: 's', toolCallId: 't', signal: controller.signal });
    controller.abort(new Error('user pressed Esc'));
    await expect(pending).rejects.toThrow('user pressed Esc');
    expect(handler.requests).toHaveLength(1);
    expect(await new RecordingApprovalHandler('allow-session').requestApproval({ toolName: 'x', input: {}, sessionId: 's', toolCallId: 't', signal: new AbortController().signal })).toBe('allow-session');
  });
});
