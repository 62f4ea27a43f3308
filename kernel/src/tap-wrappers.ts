import type { ObserverErrorContext } from '@tessera/contracts';

/** The parts of a tapable tap the wrappers touch. */
interface WrappableTap {
  name: string;
  type: 'sync' | 'async' | 'promise';
  fn: Function;
  stage?: number;
}

type Callback = (error?: unknown, result?: unknown) => void;

function merge(context: unknown, result: unknown): unknown {
  if (result === undefined || result === null || result === context) return undefined;
  return { ...(context as object), ...(result as object) };
}

/**
 * Waterfall taps return the fields they change. This wrapper folds that partial into the
 * incoming context, so tapable passes a complete context to the next tap.
 */
export function mergePartialResults<T extends WrappableTap>(tap: T): T {
  const fn = tap.fn;
  switch (tap.type) {
    case 'sync':
      return { ...tap, fn: (context: unknown) => merge(context, fn(context)) ?? context };
    case 'promise':
      return {
        ...tap,
        fn: (context: unknown) =>
          Promise.resolve(fn(context)).then((result) => merge(context, result) ?? context),
      };
    case 'async':
      return {
        ...tap,
        fn: (context: unknown, callback: Callback) =>
          fn(context, (error: unknown, result: unknown) =>
            error ? callback(error) : callback(null, merge(context, result) ?? context),
          ),
      };
  }
}

/**
 * Observer taps must not break a turn: a throw or rejection is reported and the hook goes
 * on as if the tap returned nothing.
 */
export function isolateObserver<T extends WrappableTap>(
  tap: T,
  hook: string,
  report: (context: ObserverErrorContext) => void,
): T {
  const fn = tap.fn;
  const fail = (error: unknown): undefined => {
    report({ hook, tap: tap.name, error });
    return undefined;
  };
  // Every Tessera hook takes exactly one context argument: fixed arity keeps the hot path
  // (textDelta) free of rest-parameter arrays.
  switch (tap.type) {
    case 'sync':
      return {
        ...tap,
        fn: (context: unknown) => {
          try {
            return fn(context);
          } catch (error) {
            return fail(error);
          }
        },
      };
    case 'promise':
      return {
        ...tap,
        fn: (context: unknown) => {
          try {
            return Promise.resolve(fn(context)).catch(fail);
          } catch (error) {
            return Promise.resolve(fail(error));
          }
        },
      };
    case 'async':
      return {
        ...tap,
        fn: (context: unknown, callback: Callback) => {
          try {
            fn(context, (error: unknown, result: unknown) =>
              error ? callback(null, fail(error)) : callback(null, result),
            );
          } catch (error) {
            callback(null, fail(error));
          }
        },
      };
  }
}

/** A `continue` decision applied to the context; anything else passes through. */
function applyContinue(context: unknown, result: unknown): unknown {
  if (result === null || typeof result !== 'object' || (result as { decision?: unknown }).decision !== 'continue') return result;
  const decision = result as { input?: unknown; approvedBy?: string; approvedByPerson?: boolean };
  const target = context as { input: unknown; approvedBy?: string; approvedByPerson?: boolean };
  if ('input' in decision) target.input = decision.input;
  if (decision.approvedBy !== undefined) {
    target.approvedBy = decision.approvedBy;
    target.approvedByPerson = decision.approvedByPerson === true;
  }
  return undefined;
}

/**
 * `preToolUse` is a bail hook: any value stops it. A `continue` decision is not final, so this
 * wrapper applies it to the context (the kernel's write, not the plugin's) and lets the next
 * tap run.
 */
export function applyContinueDecisions<T extends WrappableTap>(tap: T): T {
  const fn = tap.fn;
  switch (tap.type) {
    case 'sync':
      return { ...tap, fn: (context: unknown) => applyContinue(context, fn(context)) };
    case 'promise':
      return { ...tap, fn: (context: unknown) => Promise.resolve(fn(context)).then((result) => applyContinue(context, result)) };
    case 'async':
      return {
        ...tap,
        fn: (context: unknown, callback: Callback) =>
          fn(context, (error: unknown, result: unknown) => (error ? callback(error) : callback(null, applyContinue(context, result)))),
      };
  }
}
