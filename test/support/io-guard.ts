// Records calls into I/O modules while `ioState.forbidden` is set, for tests that prove a
// plugin factory (or composing its value) touches no file and spawns nothing. A test file
// installs it with vi.mock factories that import this module:
//
//   vi.mock('node:fs', (original) => import('../../../test/support/io-guard.js').then((guard) => guard.guardedModule('fs', original)));

export const ioState = { forbidden: false, calls: [] as string[] };

/** The module's functions (lowercase exports) wrapped to record a call while forbidden. */
export function guardModule<M extends Record<string, unknown>>(name: string, module: M): M {
  const guarded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(module)) {
    guarded[key] =
      typeof value === 'function' && /^[a-z]/.test(key)
        ? function (this: unknown, ...args: unknown[]) {
            if (ioState.forbidden) ioState.calls.push(`${name}.${key}`);
            return (value as (...a: unknown[]) => unknown).apply(this, args);
          }
        : value;
  }
  return guarded as M;
}

/** A vi.mock factory body: the real module, guarded, default export included. */
export async function guardedModule(name: string, original: <T>() => Promise<T>): Promise<Record<string, unknown>> {
  const actual = await original<Record<string, unknown>>();
  return { ...guardModule(name, actual), default: guardModule(name, actual.default as Record<string, unknown>) };
}
