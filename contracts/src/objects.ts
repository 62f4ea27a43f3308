/**
 * V8 11 (Node 20) writes each property added after a spread copy through a slow path: about
 * 0.4 µs each, more on objects with many keys. V8 12 (Node 22) and later do not. See
 * docs/adr/0003.
 */
const SPREAD_EXTENDS_SLOWLY = Number.parseInt(globalThis.process?.versions?.v8 ?? '', 10) < 12;

/**
 * `{ ...source, ...fields }`: a copy of `source`'s own enumerable properties with `fields`
 * written over and after them, same keys in the same order.
 *
 * For code that copies an object once per entry, token, tool call or session. On Node 20 it
 * copies with `Object.assign` onto a fresh object, which stays fast where the spread form does
 * not; elsewhere it is the spread form. A source with an own `__proto__` key (parsed JSON can
 * have one) is always copied with the spread, which keeps that key as data where
 * `Object.assign` would set the copy's prototype. `fields` is an object literal written in code.
 */
export function copyWith<T extends object, F extends object>(source: T, fields: F): Omit<T, keyof F> & F {
  if (SPREAD_EXTENDS_SLOWLY && !Object.hasOwn(source, '__proto__')) return Object.assign({}, source, fields);
  return { ...source, ...fields };
}
