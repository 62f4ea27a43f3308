import type { SessionLogger } from '@tessera/contracts';

/** Discards every event (spec: SilentSessionLogger). */
export class SilentSessionLogger implements SessionLogger {
  log(): void {}
  async flush(): Promise<void> {}
}
