import type { Settings } from './settings-schema.js';

/** Keys whose arrays are rule lists: concatenated across layers and de-duplicated. */
const PERMISSION_LISTS = ['allow', 'ask', 'deny', 'additionalDirectories'] as const;
/** Provider-owned data: merged by key, but arrays inside replace (the provider defines them). */
const REPLACE_ARRAYS_UNDER = new Set(['providers', 'provider']);

/**
 * Merges layers, lowest precedence first, the way Claude Code users expect: scalars from the
 * highest layer; `permissions.allow/ask/deny/additionalDirectories` concatenated and
 * de-duplicated (a deny in any layer survives); hooks appended per event (identical groups
 * once); objects such as `env` and `providers` deep-merged; other arrays concatenated.
 */
export function mergeSettings(layers: readonly Settings[]): Settings {
  let merged: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (key === 'permissions') merged.permissions = mergePermissions(merged.permissions as Settings['permissions'], value as NonNullable<Settings['permissions']>);
      else if (key === 'hooks') merged.hooks = mergeHooks(merged.hooks as Settings['hooks'], value as NonNullable<Settings['hooks']>);
      else merged[key] = mergeValue(merged[key], value, !REPLACE_ARRAYS_UNDER.has(key));
    }
  }
  return merged as Settings;
}

function mergePermissions(base: Settings['permissions'], next: NonNullable<Settings['permissions']>): NonNullable<Settings['permissions']> {
  const result: Record<string, unknown> = { ...(base ?? {}) };
  for (const [key, value] of Object.entries(next)) {
    if ((PERMISSION_LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      result[key] = unique([...((result[key] as string[] | undefined) ?? []), ...value]);
    } else if (value !== undefined) result[key] = mergeValue(result[key], value, true);
  }
  return result as NonNullable<Settings['permissions']>;
}

function mergeHooks(base: Settings['hooks'], next: NonNullable<Settings['hooks']>): NonNullable<Settings['hooks']> {
  const result: NonNullable<Settings['hooks']> = { ...(base ?? {}) };
  for (const [event, groups] of Object.entries(next)) {
    const seen = new Set((result[event] ?? []).map((group) => JSON.stringify(group)));
    const combined = [...(result[event] ?? [])];
    for (const group of groups) {
      const key = JSON.stringify(group);
      if (!seen.has(key)) combined.push(group);
      seen.add(key);
    }
    result[event] = combined;
  }
  return result;
}

function mergeValue(base: unknown, next: unknown, concatArrays: boolean): unknown {
  if (Array.isArray(next)) {
    return concatArrays && Array.isArray(base) ? uniqueValues([...base, ...next]) : [...next];
  }
  if (isPlainObject(next) && isPlainObject(base)) {
    const result: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(next)) {
      if (value !== undefined) result[key] = mergeValue(result[key], value, concatArrays);
    }
    return result;
  }
  return isPlainObject(next) ? mergeValue({}, next, concatArrays) : next;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

function uniqueValues(items: unknown[]): unknown[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = typeof item === 'string' ? `s:${item}` : JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
