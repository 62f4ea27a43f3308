import { isAbsolute, resolve } from 'node:path';
import { pathPatternRegExps, realPathNearest, type PathAnchors } from './path-match.js';
import type { CompiledRule } from './permission-rule.js';
import { compileRules, type PermissionRules } from './rule-set.js';

/** A test for absolute file paths: true when a read of the file is denied. */
export type DeniedPathTest = (absolutePath: string) => boolean;

const denyAll: DeniedPathTest = () => true;

/**
 * Read-family deny rules as one path test, for tools that read many files in one call
 * (Claude Code applies `Read(…)` denies to what Glob lists and Grep searches). Undefined when
 * no such rule exists, so callers skip the test entirely. A path is denied exactly when
 * `Read({ file_path })` would be: each rule is tested case-insensitively against the path as
 * given and against its real path, under every reading (as given, real) of the rule's anchor.
 *
 * Built for thousands of calls: the rule regexes are prepared here once, and real paths come
 * from a per-directory cache (one syscall per directory, none per file). The file's own
 * name is not followed: callers hand over files they listed without following links.
 */
export function readDenyTest(rules: PermissionRules, anchors: PathAnchors): DeniedPathTest | undefined {
  const denies = compileRules(rules).deny.rulesFor('Read');
  if (denies.length === 0) return undefined;
  if (denies.some((rule) => rule.kind === 'any')) return denyAll;
  const regexes = denies.flatMap((rule) => (rule.kind === 'path' ? pathPatternRegExps(rule.path!, anchors, true) : []));
  // Tool-name globs (`*(…)`) with a value or `file_path:` specifier: like the evaluator, they see the path as given.
  const valueRules = denies.filter((rule) => rule.kind === 'value' || (rule.kind === 'param' && rule.param === 'file_path'));
  if (regexes.length === 0 && valueRules.length === 0) return undefined;

  const matches = (path: string): boolean => regexes.some((regex) => regex.test(path));
  const realDirectories = new Map<string, string>();
  const realPath = (path: string): string => {
    const slash = path.lastIndexOf('/');
    const directory = slash <= 0 ? '/' : path.slice(0, slash);
    let real = realDirectories.get(directory);
    if (real === undefined) {
      real = realPathNearest(directory);
      realDirectories.set(directory, real);
    }
    return real === directory ? path : `${real === '/' ? '' : real}/${path.slice(slash + 1)}`;
  };
  return (absolutePath) => {
    const path = isAbsolute(absolutePath) ? absolutePath : resolve(anchors.cwd, absolutePath);
    if (matches(path) || valueMatches(valueRules, path)) return true;
    const real = realPath(path);
    return real !== path && matches(real);
  };
}

function valueMatches(rules: readonly CompiledRule[], path: string): boolean {
  for (const rule of rules) if (rule.regex!.test(path)) return true;
  return false;
}
