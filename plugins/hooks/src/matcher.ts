const EXACT_LIST = /^[A-Za-z0-9_\- ,|]*$/;
const cache = new Map<string, (value: string) => boolean>();

/**
 * Claude Code matcher semantics: `*`, empty or absent match everything; a matcher made
 * only of letters, digits, `_`, `-`, spaces, `,` and `|` is a list of exact names; anything
 * else is an unanchored JavaScript regex. An invalid regex matches nothing.
 */
export function compileMatcher(matcher: string | undefined): (value: string) => boolean {
  const key = matcher ?? '';
  let test = cache.get(key);
  if (test) return test;
  const trimmed = key.trim();
  if (trimmed === '' || trimmed === '*') test = () => true;
  else if (EXACT_LIST.test(trimmed)) {
    const names = new Set(trimmed.split(/[|,]/).map((name) => name.trim()).filter(Boolean));
    test = (value) => names.has(value);
  } else {
    try {
      const regex = new RegExp(trimmed);
      test = (value) => regex.test(value);
    } catch {
      test = () => false;
    }
  }
  cache.set(key, test);
  return test;
}

export function matchesMatcher(matcher: string | undefined, value: string | undefined): boolean {
  if (value === undefined) return matcher === undefined || matcher.trim() === '' || matcher.trim() === '*';
  return compileMatcher(matcher)(value);
}
