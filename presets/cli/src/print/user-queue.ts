import type { ImageBlock, TextBlock } from '@tessera/contracts';

/** Queued user messages of a headless session, taken one turn at a time. */
export interface QueuedMessage {
  text: string;
  /** Text and image blocks in order, when the message has images. */
  blocks?: Array<TextBlock | ImageBlock>;
  /** A message that cannot be sent: answered in its turn by an error result saying why. */
  refusal?: string;
  /** `--replay-user-messages`: the line to echo when the turn starts. */
  echo?: Record<string, unknown>;
}

export class UserQueue {
  private readonly items: QueuedMessage[] = [];
  private waiter: ((value: QueuedMessage | undefined) => void) | undefined;
  private closed = false;

  get size(): number {
    return this.items.length;
  }

  push(message: QueuedMessage): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(message);
    } else this.items.push(message);
  }

  /** What is queued, oldest first. */
  snapshot(): string[] {
    return this.items.map((item) => item.text);
  }

  /** Drops what is queued (an `interrupt` with `cancel_queued`); returns it. */
  clear(): string[] {
    return this.items.splice(0).map((item) => item.text);
  }

  close(): void {
    this.closed = true;
    if (this.waiter && this.items.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(undefined);
    }
  }

  take(): Promise<QueuedMessage | undefined> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}
