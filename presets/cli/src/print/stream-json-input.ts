import { randomUUID } from 'node:crypto';
import type { InteractiveSession, Session } from '@tessera/kernel';
import { isRecord, type ControlChannel } from './control-channel.js';
import type { HostBridge } from './host-bridge.js';
import type { Output } from './output.js';
import type { StdinLine, StdinLines } from './stdin-lines.js';
import { readUserContent } from './user-content.js';
import type { UserQueue } from './user-queue.js';

/** The first `initialize` control request, read before the session is composed. */
export interface InitializeRequest {
  requestId: string;
  request: Record<string, unknown>;
}

/**
 * Stream-json input up to `initialize` (taken out of the lines) or the first user message,
 * whichever comes first: what the host declared there is part of the composition. The lines
 * read before it (`early`) are handled first once the session runs.
 */
export async function readUntilStart(lines: StdinLines): Promise<{ initialize: InitializeRequest | undefined; early: StdinLine[] }> {
  let initialize: InitializeRequest | undefined;
  const early: StdinLine[] = [];
  for (;;) {
    const next = await lines.next();
    if (next === undefined) break;
    early.push(next);
    const value = next.value;
    if (value?.type === 'control_request' && isRecord(value.request) && value.request.subtype === 'initialize' && typeof value.request_id === 'string') {
      initialize = { requestId: value.request_id, request: value.request };
      early.pop();
      break;
    }
    if (value?.type === 'user') break;
  }
  return { initialize, early };
}

/** What the input reader hands each line to, once the session runs. */
export interface StreamJsonInputContext {
  out: Output;
  control: ControlChannel;
  host: HostBridge;
  queue: UserQueue;
  interactive: InteractiveSession;
  session: Session;
  /** `--replay-user-messages`: each user message is queued with its echo. */
  replayUserMessages: boolean;
}

/**
 * Reads the stream-json input to its end: the `early` lines first, then the rest. User messages
 * go into the queue (one turn each), control requests to the host bridge, control responses to
 * the channel; at the end of the input both the channel and the queue are closed. Handles the
 * `early` lines before its first wait, so a caller that does not await it sees them queued.
 */
export async function readStreamJsonInput(lines: StdinLines, early: readonly StdinLine[], context: StreamJsonInputContext): Promise<void> {
  const { out, control, host, queue, interactive, session } = context;
  const handle = (entry: StdinLine): void => {
    const { value } = entry;
    if (value === undefined) {
      out.line({ type: 'system', subtype: 'error', session_id: session.sessionId, uuid: randomUUID(), error: `stdin line ${entry.line} is not a JSON object; it was skipped: ${entry.raw.slice(0, 200)}` });
      return;
    }
    switch (value.type) {
      case 'user': {
        const content = readUserContent(value.message, entry.line);
        if ('error' in content) {
          // In its place in the queue: the host reads one result per message it sent (an
          // empty message too, or it would wait for that result forever).
          queue.push({ text: '', refusal: content.error });
          return;
        }
        if (content.skipped.length > 0) {
          out.line({
            type: 'system',
            subtype: 'error',
            session_id: session.sessionId,
            uuid: randomUUID(),
            error: `stdin line ${entry.line}: ${content.skipped.join(', ')} content blocks are not supported yet and were left out`,
          });
        }
        // The echo carries a `uuid` as every line does: the host's own, else a new one.
        const echo = context.replayUserMessages ? { ...value, session_id: session.sessionId, uuid: typeof value.uuid === 'string' ? value.uuid : randomUUID(), isReplay: true } : undefined;
        queue.push({ text: content.text, ...(content.blocks ? { blocks: content.blocks } : {}), ...(echo ? { echo } : {}) });
        return;
      }
      case 'control_request':
        host.handleRequest(value, entry.line, interactive, session, queue);
        return;
      case 'control_response':
        control.handleResponse(value);
        return;
      case 'control_cancel_request':
      case 'keep_alive':
      default:
        return;
    }
  };
  for (const entry of early) handle(entry);
  for (;;) {
    const entry = await lines.next();
    if (entry === undefined) break;
    handle(entry);
  }
  control.close();
  queue.close();
}
