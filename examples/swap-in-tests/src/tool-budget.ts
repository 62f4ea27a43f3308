import { createToken } from '@tessera/contracts';

/** How many tool calls each session may still make. */
export interface ToolBudget {
  /** Calls `sessionId` may still make. */
  remaining(sessionId: string): number;
  /** Spends one call; `false` when none is left, and then the call must not run. */
  spend(sessionId: string): boolean;
  /** Forgets a session that ended. */
  release(sessionId: string): void;
  /** Calls refused so far, across sessions. */
  readonly refusedCalls: number;
}

export const ToolBudget = createToken<ToolBudget>('ToolBudget');

/** The default `ToolBudget`: the same limit for every session, counted in memory. */
export class CountingToolBudget implements ToolBudget {
  private readonly spent = new Map<string, number>();
  private refused = 0;

  constructor(private readonly limit: number) {}

  get refusedCalls(): number {
    return this.refused;
  }

  remaining(sessionId: string): number {
    return this.limit - (this.spent.get(sessionId) ?? 0);
  }

  spend(sessionId: string): boolean {
    if (this.remaining(sessionId) <= 0) {
      this.refused += 1;
      return false;
    }
    this.spent.set(sessionId, (this.spent.get(sessionId) ?? 0) + 1);
    return true;
  }

  release(sessionId: string): void {
    this.spent.delete(sessionId);
  }
}
