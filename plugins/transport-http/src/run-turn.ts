import { randomUUID } from 'node:crypto';
import { describeError } from '@tessera/contracts';
import type { SessionCluster, SessionLease } from '@tessera/session-hub';
import { Turn, type HubSession } from './hub-session.js';
import { UiStreamMapper } from './ui-stream.js';

/** What a turn run in replica mode needs: the cluster its parts are published to, the session's lease, and how to stop serving its control requests. */
export interface ReplicaTurn {
  cluster: SessionCluster;
  lease: SessionLease;
  stopServing: () => void;
}

/**
 * Runs a turn of `session` and makes it `session.turn`: its parts go to the session's watchers
 * and into the turn's log. In replica mode its events are published, and at its end the lease is
 * released, then serving stops.
 */
export function runTurn(session: HubSession, prompt: string, replica?: ReplicaTurn): Turn {
  const turn = new Turn(randomUUID());
  session.turn = turn;
  const publish = replica ? (event: Parameters<SessionCluster['publish']>[1]) => replica.cluster.publish(session.id, event) : undefined;
  publish?.({ type: 'turn-start', turnId: turn.id });
  const mapper = new UiStreamMapper((chunk) => {
    session.broadcast(chunk);
    publish?.({ type: 'turn-part', turnId: turn.id, part: chunk });
  });
  session.mapper = mapper;
  const interactive = session.interactive;
  const offSession = interactive.getSession().subscribe((event) => mapper.sessionEvent(event));
  const offTool = interactive.on('tool_end', (state) => mapper.toolEnd(state));
  const offBackground = interactive.on('background_task_event', (event) => mapper.background(event));
  let interrupted = false;
  const offInterrupted = interactive.on('interrupted', () => (interrupted = true));
  // A lease lost mid-turn (another replica may now change the session): stop. The save and the
  // events that follow carry the lost lease's token until the release, so the cluster refuses
  // them once another replica holds the lock, however late they reach it.
  const onLost = (): void => interactive.abort();
  replica?.lease.signal.addEventListener('abort', onLost, { once: true });
  mapper.start();
  const finish = (): void => {
    offSession();
    offTool();
    offBackground();
    offInterrupted();
    replica?.lease.signal.removeEventListener('abort', onLost);
    turn.end();
    // The end is published before the lock is released: a follower that finds the lock free has seen it.
    publish?.({ type: 'turn-end', turnId: turn.id });
    // Serving stops after the release: a replica that finds nobody serving finds the turn ended too.
    void replica?.lease.release().finally(replica.stopServing);
  };
  interactive.submit(prompt).then(
    () => {
      if (interrupted) mapper.abort('interrupted');
      else mapper.finish();
      finish();
    },
    (error: unknown) => {
      if (interrupted) mapper.abort('interrupted');
      else mapper.fail(describeError(error));
      finish();
    },
  );
  return turn;
}
