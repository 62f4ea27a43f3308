/**
 * Named tap stages. Lower runs first. Taps at `Observe` or later are observers:
 * their errors are reported on `observerError` and never reach the turn.
 */
export const Stage = Object.freeze({
  /** Policy that may stop a call before anything else sees it (permissions). */
  Guard: -100,
  Default: 0,
  /** Side-effect-free watchers (loggers, transports, metrics). */
  Observe: 100,
});

export type Stage = (typeof Stage)[keyof typeof Stage];
