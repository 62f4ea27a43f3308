import type { SessionLogData, SessionLogger } from '@tessera/contracts';

/** Discards everything. */
export class SilentSessionLogger implements SessionLogger {
  /** Does nothing. */
  log(): void {}
}

/** One call of `log`, as {@link RecordingSessionLogger} keeps it. */
export interface RecordedLogEvent {
  sessionId: string;
  event: string;
  data: SessionLogData;
}

/** Keeps every event in memory, for assertions. */
export class RecordingSessionLogger implements SessionLogger {
  readonly events: RecordedLogEvent[] = [];

  /** Appends the event to `events`. */
  log(sessionId: string, event: string, data: SessionLogData): void {
    this.events.push({ sessionId, event, data });
  }

  /** The events named `event`, in order. */
  named(event: string): RecordedLogEvent[] {
    return this.events.filter((entry) => entry.event === event);
  }
}
