import { SessionControlError, type ClusterControlHandler, type SessionCluster } from '@tessera/session-hub';
import { z } from 'zod';
import { HubError } from './hub-error.js';
import { unavailable } from './hub-replica.js';
import type { HubSession, SessionSummary } from './hub-session.js';
import type { PermissionAskData } from './ui-stream.js';

/**
 * What a replica asks the replica running a session's turn (replica mode). `owner` is the
 * asking token's id: the asking replica checked it already, the running one checks it again.
 */
export const hubControlMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('abort'), owner: z.string() }),
  z.object({
    type: z.literal('permission'),
    owner: z.string(),
    requestId: z.string(),
    decision: z.enum(['allow', 'allow_always', 'deny']),
    message: z.string().optional(),
  }),
  /** The session's pending permission asks (a summary asked for on another replica). */
  z.object({ type: z.literal('pending'), owner: z.string() }),
]);
export type HubControlMessage = z.infer<typeof hubControlMessage>;

const askData = z.object({
  requestId: z.string(),
  status: z.enum(['pending', 'allowed', 'denied', 'timed_out', 'cancelled']),
  toolName: z.string(),
  toolCallId: z.string(),
  input: z.unknown(),
  suggestedRule: z.string().optional(),
});

/** The answer to each kind of request. */
const answers = {
  abort: z.object({ aborted: z.boolean() }),
  /** No `permission`: no such ask pending there. */
  permission: z.object({ permission: askData.optional() }),
  pending: z.object({ pendingPermissions: z.array(askData) }),
} as const;
type HubControlAnswer<T extends HubControlMessage['type']> = z.infer<(typeof answers)[T]>;

/**
 * Serves the control requests of `session` while its turn runs here. A request of another
 * owner is answered as if nothing ran (the same as a 404 on the asking replica).
 */
export function controlHandler(session: HubSession): ClusterControlHandler {
  return (raw): HubControlAnswer<HubControlMessage['type']> => {
    const message = hubControlMessage.parse(raw);
    const mine = message.owner === session.owner;
    switch (message.type) {
      case 'abort':
        return { aborted: mine && session.stop() };
      case 'permission': {
        const permission = mine ? session.settle(message.requestId, message.decision, message.message) : undefined;
        return permission ? { permission } : {};
      }
      case 'pending':
        return { pendingPermissions: mine ? session.pendingAsks() : [] };
    }
  };
}

/**
 * Sends `message` to the replica running the session's turn and returns its answer;
 * `undefined` when no turn runs on another replica. A running turn whose replica does not
 * answer (stopped, hangs) is `replica_unreachable` (503): the client learns it at once or
 * after the cluster's control timeout, never waits longer.
 */
export async function forwardControl<T extends HubControlMessage['type']>(
  cluster: SessionCluster,
  sessionId: string,
  message: Extract<HubControlMessage, { type: T }>,
): Promise<HubControlAnswer<T> | undefined> {
  let reply;
  try {
    reply = await cluster.control(sessionId, message);
  } catch (error) {
    if (error instanceof SessionControlError) throw new HubError('replica_unreachable', 503, error.message);
    throw unavailable(error);
  }
  if (reply.served) {
    const schema: z.ZodType = answers[message.type];
    const parsed = schema.safeParse(reply.answer);
    if (!parsed.success) throw new HubError('replica_unreachable', 503, `The server replica running this session's turn gave an answer this replica does not understand (${parsed.error.issues[0]?.message}); are both the same version?`);
    return parsed.data as HubControlAnswer<T>;
  }
  // Nobody serves the session: no turn runs, or the replica running one went away without ending it.
  let turnId: string | undefined;
  try {
    turnId = await cluster.runningTurn(sessionId);
  } catch (error) {
    throw unavailable(error);
  }
  if (turnId !== undefined) {
    throw new HubError(
      'replica_unreachable',
      503,
      "The server replica running this session's turn is not reachable (it stopped); the turn ends as lost once that replica's session lock expires. Retry then.",
    );
  }
  return undefined;
}

/** `summary` with `running` and the pending asks of a turn of the session that runs on another replica (unchanged when none does, or its replica does not answer). */
export async function withRemoteTurn(cluster: SessionCluster, owner: string, summary: SessionSummary): Promise<SessionSummary> {
  try {
    const forwarded = await forwardControl(cluster, summary.id, { type: 'pending', owner });
    return forwarded ? { ...summary, running: true, pendingPermissions: forwarded.pendingPermissions } : summary;
  } catch (error) {
    if (error instanceof HubError && error.code === 'replica_unreachable') return summary;
    throw error;
  }
}
