import { TesseraError } from '@tessera/contracts';

/** Where a self-hosting edit loop is. */
export type SelfHostingLoopState =
  | 'idle'
  | 'checkpoint_created'
  | 'editing'
  | 'edits_applied'
  | 'verifying'
  | 'verified'
  | 'failed'
  | 'recovering';

/** What happened. Each is valid in the states the table below lists, and nowhere else. */
export type SelfHostingLoopEvent =
  | 'checkpoint_created'
  | 'edits_started'
  | 'edits_applied'
  | 'edits_failed'
  | 'verify_started'
  | 'verify_passed'
  | 'verify_failed'
  | 'loop_completed'
  | 'recovery_started'
  | 'recovered'
  | 'recovery_failed';

/**
 * The whole machine. `edits_applied → verify_passed` is allowed without `verify_started` for
 * hosts that do not report the start of verification; `recovery_failed` returns to `failed`,
 * from which recovery can be tried again.
 */
export const SELF_HOSTING_TRANSITIONS: Readonly<Record<SelfHostingLoopState, Readonly<Partial<Record<SelfHostingLoopEvent, SelfHostingLoopState>>>>> = {
  idle: { checkpoint_created: 'checkpoint_created' },
  checkpoint_created: { edits_started: 'editing' },
  editing: { edits_applied: 'edits_applied', edits_failed: 'failed' },
  edits_applied: { verify_started: 'verifying', verify_passed: 'verified', verify_failed: 'failed' },
  verifying: { verify_passed: 'verified', verify_failed: 'failed' },
  verified: { loop_completed: 'idle' },
  failed: { recovery_started: 'recovering' },
  recovering: { recovered: 'idle', recovery_failed: 'failed' },
};

/** An event that the current state does not accept. */
export class SelfHostingTransitionError extends TesseraError {
  readonly state: string;
  readonly event: string;

  constructor(state: string, event: string) {
    const allowed = Object.hasOwn(SELF_HOSTING_TRANSITIONS, state) ? Object.keys(SELF_HOSTING_TRANSITIONS[state as SelfHostingLoopState]) : [];
    const next = allowed.length > 0 ? `it accepts ${allowed.join(', ')}` : `"${state}" is not a self-hosting loop state`;
    super(`Self-hosting loop cannot take "${event}" in state "${state}": ${next}.`, {
      code: 'invalid_self_hosting_transition',
      category: 'state',
      recoverable: false,
      details: { state, event, allowed },
    });
    this.state = state;
    this.event = event;
  }
}

/** The state after `event`; throws `SelfHostingTransitionError` for any pair the table lacks. */
export function transitionSelfHostingLoop(state: SelfHostingLoopState, event: SelfHostingLoopEvent): SelfHostingLoopState {
  // `hasOwn`, so that `toString` or `__proto__` from an untyped caller is rejected too.
  const table = Object.hasOwn(SELF_HOSTING_TRANSITIONS, state) ? SELF_HOSTING_TRANSITIONS[state] : undefined;
  const next = table !== undefined && Object.hasOwn(table, event) ? table[event] : undefined;
  if (next === undefined) throw new SelfHostingTransitionError(state, event);
  return next;
}
