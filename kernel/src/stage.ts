/**
 * Named tap stages. Lower runs first. Taps at `Observe` or later are observers:
 * their errors are reported on `observerError` and never reach the turn.
 */
export const Stage = Object.freeze({
  /** Runs just before the guard: Claude Code PreToolUse hooks, whose decisions the guard honours. */
  BeforeGuard: -110,
  /** Policy that may stop a call before anything else sees it (permissions). */
  Guard: -100,
  /** Just after the guard: sees what the guard let through, before ordinary taps. */
  AfterGuard: -90,
  Default: 0,
  /** Side-effect-free watchers (loggers, transports, metrics). */
  Observe: 100,
});

export type Stage = (typeof Stage)[keyof typeof Stage];
