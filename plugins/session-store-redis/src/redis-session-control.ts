import { randomUUID } from 'node:crypto';
import { describeError } from '@tessera/contracts';
import { SessionControlError, type ClusterControlHandler, type ClusterControlReply } from '@tessera/session-hub';
import type { Redis } from 'ioredis';
import type { SessionKeys } from './session-keys.js';

export interface RedisSessionControlOptions {
  redis: Redis;
  keys: SessionKeys;
  /** How long a request waits for its answer unless the caller says otherwise. */
  timeoutMs: number;
  call: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
  /** A failure nobody awaits (an answer that could not be sent, a malformed request). */
  report(error: unknown, operation: string): void;
}

interface Waiting {
  sessionId: string;
  resolve(answer: unknown): void;
  reject(error: Error): void;
  /** How many subscribers PUBLISH reached (unknown until its reply, which may come after answers). */
  receivers?: number;
  /** How many of them said they no longer serve the session. */
  unserved: number;
}

/** What a request resolves with when every replica it reached had stopped serving the session. */
const NOT_SERVED: unique symbol = Symbol('not served');

/** A request on a session's control channel. */
interface ControlRequest {
  id: string;
  replyTo: string;
  message: unknown;
}

/**
 * An answer on the requester's replies channel. `unserved`: the replica got the request after it
 * stopped serving the session but before Redis had processed its UNSUBSCRIBE.
 */
type ControlAnswer = { id: string; ok: true; answer: unknown } | { id: string; ok: false; error: string } | { id: string; ok: false; unserved: true };

/**
 * Control requests over Redis pub/sub. The replica serving a session subscribes to its channel
 * (`<prefix>:session:<id>:control`); a request is published there with an id and the sender's
 * replies channel (`<prefix>:control:replies:<uuid>`), where the answer comes back. PUBLISH
 * counts the subscribers that got the request, so "nobody serves this session" is known at once
 * (a replica that died has lost its subscription with its connection); an answer that does not
 * come in time (the serving replica died or hangs after taking the request) is `control_timeout`.
 * A replica that has just stopped serving a session may still get a request for it (its
 * UNSUBSCRIBE is not yet processed); it answers "not served", and when every replica the request
 * reached said so, the requester gets `served: false` at once instead of waiting for the timeout.
 * One subscriber connection per instance carries both kinds of channel; nothing is stored.
 */
export class RedisSessionControl {
  private readonly repliesChannel: string;
  private subscriber: Promise<Redis> | undefined;
  private readonly waiting = new Map<string, Waiting>();
  /** Channel → the session it controls and its handler. */
  private readonly served = new Map<string, { sessionId: string; handler: ClusterControlHandler }>();
  /** Turn-start channel → its watchers. */
  private readonly turnWatchers = new Map<string, Set<(turnId: string) => void>>();
  private closed = false;

  constructor(private readonly options: RedisSessionControlOptions) {
    this.repliesChannel = options.keys.replies(randomUUID());
  }

  async control(sessionId: string, message: unknown, timeoutMs = this.options.timeoutMs): Promise<ClusterControlReply> {
    const channel = this.options.keys.control(sessionId);
    await this.connection();
    const id = randomUUID();
    const request = JSON.stringify({ id, replyTo: this.repliesChannel, message } satisfies ControlRequest);
    // Waiting before the request goes out: its answer may arrive before PUBLISH's own reply.
    let waiting!: Waiting;
    const answered = new Promise<unknown>((resolve, reject) => (waiting = { sessionId, resolve, reject, unserved: 0 }));
    answered.catch(() => undefined);
    this.waiting.set(id, waiting);
    let timer: NodeJS.Timeout | undefined;
    try {
      const receivers = await this.options.call('send a control request', () => this.options.redis.publish(channel, request));
      waiting.receivers = receivers;
      if (receivers === 0 || waiting.unserved >= receivers) return { served: false };
      timer = setTimeout(() => this.settle(id, new SessionControlError(sessionId, 'timeout', `${timeoutMs} ms`)), timeoutMs);
      const answer = await answered;
      return answer === NOT_SERVED ? { served: false } : { served: true, answer };
    } finally {
      clearTimeout(timer);
      this.waiting.delete(id);
    }
  }

  async serveControl(sessionId: string, handler: ClusterControlHandler): Promise<() => void> {
    const channel = this.options.keys.control(sessionId);
    const subscriber = await this.connection();
    const entry = { sessionId, handler };
    // A newer server of the same session in this process replaces the older; the older's stop then does nothing.
    this.served.set(channel, entry);
    try {
      await this.options.call('serve control requests', () => subscriber.subscribe(channel));
    } catch (error) {
      if (this.served.get(channel) === entry) this.served.delete(channel);
      throw error;
    }
    return () => {
      if (this.served.get(channel) !== entry) return;
      this.served.delete(channel);
      subscriber.unsubscribe(channel).catch((error: unknown) => this.options.report(error, 'stop serving control requests'));
    };
  }

  /** Calls `listener` with the id of each turn of the session that starts, on any replica, until the returned function is called. */
  async watchTurns(sessionId: string, listener: (turnId: string) => void): Promise<() => void> {
    const channel = this.options.keys.turnStarts(sessionId);
    const subscriber = await this.connection();
    let watchers = this.turnWatchers.get(channel);
    const first = watchers === undefined;
    if (!watchers) this.turnWatchers.set(channel, (watchers = new Set()));
    watchers.add(listener);
    if (first) {
      try {
        await this.options.call('watch turns', () => subscriber.subscribe(channel));
      } catch (error) {
        watchers.delete(listener);
        if (watchers.size === 0 && this.turnWatchers.get(channel) === watchers) this.turnWatchers.delete(channel);
        throw error;
      }
    }
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      watchers.delete(listener);
      if (watchers.size > 0 || this.turnWatchers.get(channel) !== watchers) return;
      this.turnWatchers.delete(channel);
      subscriber.unsubscribe(channel).catch((error: unknown) => this.options.report(error, 'stop watching turns'));
    };
  }

  /** Fails the requests still waiting and closes the subscriber connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [id, waiting] of this.waiting) this.settle(id, new SessionControlError(waiting.sessionId, 'failed', 'this server is shutting down'));
    this.served.clear();
    this.turnWatchers.clear();
    const subscriber = await this.subscriber?.catch(() => undefined);
    this.subscriber = undefined;
    subscriber?.disconnect();
  }

  /** The subscriber connection, listening on this instance's replies channel. */
  private connection(): Promise<Redis> {
    if (this.closed) return Promise.reject(new Error('The session cluster is closed (the server is shutting down).'));
    this.subscriber ??= (async () => {
      const subscriber = this.options.redis.duplicate();
      // Outages are reported by the shared connection; this one reconnects and resubscribes on its own.
      subscriber.on('error', () => undefined);
      subscriber.on('message', (channel: string, text: string) => this.receive(channel, text));
      try {
        await this.options.call('open the control channel', () => subscriber.subscribe(this.repliesChannel));
      } catch (error) {
        subscriber.disconnect();
        this.subscriber = undefined;
        throw error;
      }
      return subscriber;
    })();
    return this.subscriber;
  }

  private receive(channel: string, text: string): void {
    if (channel === this.repliesChannel) {
      const answer = parseJson(text) as Partial<ControlAnswer> | undefined;
      if (typeof answer?.id === 'string') this.settle(answer.id, answer as ControlAnswer);
      return;
    }
    const watchers = this.turnWatchers.get(channel);
    if (watchers) {
      for (const watcher of [...watchers]) {
        try {
          watcher(text);
        } catch (error) {
          this.options.report(error, 'tell a watcher a turn started');
        }
      }
      return;
    }
    const served = this.served.get(channel);
    const sessionsPrefix = `${this.options.keys.prefix}:session:`;
    // Neither served nor a control channel: a turn start after its watchers left, before the UNSUBSCRIBE.
    if (!served && !(channel.startsWith(sessionsPrefix) && channel.endsWith(':control'))) return;
    const sessionId = served?.sessionId ?? channel.slice(sessionsPrefix.length, -':control'.length);
    const request = parseJson(text) as Partial<ControlRequest> | undefined;
    const repliesPrefix = `${this.options.keys.prefix}:control:replies:`;
    if (typeof request?.id !== 'string' || typeof request.replyTo !== 'string' || !request.replyTo.startsWith(repliesPrefix)) {
      this.options.report(new Error(`a malformed control request for session ${sessionId} was ignored`), 'serve a control request');
      return;
    }
    const { id, replyTo } = request;
    const send = (answer: string): Promise<unknown> =>
      this.options.redis.publish(replyTo, answer).catch((error: unknown) => {
        if (!this.closed) this.options.report(error, 'answer a control request');
      });
    if (!served) {
      void send(JSON.stringify({ id, ok: false, unserved: true } satisfies ControlAnswer));
      return;
    }
    void (async () => {
      let answer: string;
      try {
        answer = JSON.stringify({ id, ok: true, answer: (await served.handler(request.message)) ?? null } satisfies ControlAnswer);
      } catch (error) {
        answer = JSON.stringify({ id, ok: false, error: describeError(error) } satisfies ControlAnswer);
      }
      await send(answer);
    })();
  }

  /** Ends a waiting request with the answer it got, or with an error. */
  private settle(id: string, outcome: ControlAnswer | Error): void {
    const waiting = this.waiting.get(id);
    if (!waiting) return;
    if (!(outcome instanceof Error) && outcome.ok === false && 'unserved' in outcome) {
      // Another replica the request reached may still answer it; `served: false` only when none can.
      waiting.unserved += 1;
      if (waiting.receivers === undefined || waiting.unserved < waiting.receivers) return;
      this.waiting.delete(id);
      waiting.resolve(NOT_SERVED);
      return;
    }
    this.waiting.delete(id);
    if (outcome instanceof Error) waiting.reject(outcome);
    else if (outcome.ok === true) waiting.resolve(outcome.answer);
    else waiting.reject(new SessionControlError(waiting.sessionId, 'failed', String(outcome.error)));
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
