import { basename, dirname, extname, resolve } from 'node:path';
import type { SkillEntry } from '@tessera/contracts';

/**
 * The listing fields of a skill or command file whose frontmatter is plain `key: value`
 * lines, read without a YAML parser (the parser is ~90% of a cold scan). It answers only
 * when the full reader (`readSkillFile` / `readCommandFile`) would give the same entry and
 * nothing above `info`; anything else — a block or flow value, a quote, a comment, a value
 * YAML would read as a number or null, an unknown key, a missing description, a name with
 * undocumented characters, a long description — returns `undefined` and the caller uses the
 * full reader. `quick-listing.test.ts` checks the two agree on every corpus file.
 */
export function quickListing(path: string, content: string, kind: 'skill' | 'command', source: string): SkillEntry | undefined {
  let text = content;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split('\n', 64);
  if (!FENCE.test(lines[0] ?? '')) return undefined;
  const data = new Map<string, string>();
  let closed = false;
  for (let index = 1; index < lines.length; index += 1) {
    const line = lines[index]!.replace(/\r$/, '');
    if (FENCE.test(line)) {
      closed = true;
      break;
    }
    if (line.trim() === '') continue;
    const match = KEY_LINE.exec(line);
    if (match === null) return undefined;
    const [, key, value] = match as unknown as [string, string, string];
    if (!KNOWN_KEYS.has(key) || data.has(key) || !PLAIN.test(value) || NOT_PLAIN.test(value)) return undefined;
    if (BOOLEAN_KEYS.has(key) ? !BOOLEAN.test(value) : NON_STRING.test(value)) return undefined;
    data.set(key, value);
  }
  if (!closed) return undefined;

  const description = data.get('description');
  if (description === undefined || description.length > 1536) return undefined;
  const context = data.get('context');
  if (context !== undefined && context !== 'fork') return undefined;
  if (data.has('agent') && context !== 'fork') return undefined;
  const file = resolve(path);
  const id = kind === 'skill' ? basename(dirname(file)) : basename(file, extname(file));
  let name = id;
  if (kind === 'skill' && data.has('name')) {
    name = data.get('name')!;
    if (!LOOSE_NAME.test(name)) return undefined;
  }
  const hint = data.get('argument-hint');
  return {
    id,
    name,
    description,
    source,
    file,
    ...(hint === undefined ? {} : { argumentHint: hint }),
    userInvocable: data.has('user-invocable') ? data.get('user-invocable')!.toLowerCase() === 'true' : true,
    modelInvocable: data.has('disable-model-invocation') ? data.get('disable-model-invocation')!.toLowerCase() !== 'true' : true,
  };
}

const FENCE = /^---[ \t]*\r?$/;
const KEY_LINE = /^([A-Za-z_][\w-]*):[ \t]+(\S(?:.*\S)?)[ \t]*$/;
/** A plain YAML scalar: no leading indicator character. */
const PLAIN = /^[^-?:,[\]{}#&*!|>'"%@`]/;
/** Would end the scalar or start a mapping or comment. */
const NOT_PLAIN = /:\s|:$|\s#/;
/** YAML reads these as null, booleans or numbers (a string field would then warn or differ). */
const NON_STRING = /^(?:~|null|true|false|[-+.]?\d|\.(?:inf|nan))/i;
const BOOLEAN = /^(?:true|false)$/i;
const BOOLEAN_KEYS = new Set(['disable-model-invocation', 'user-invocable']);
/** Mirrors `LOOSE_NAME` in @tessera/formats: names that load without a warning. */
const LOOSE_NAME = /^[a-z0-9][a-z0-9._-]*$/;
/**
 * Keys the full reader accepts with at most an `info` when given a plain string (a tool list
 * as a comma string never warns). `hooks` and nested keys such as `metadata` are left to it.
 */
const KNOWN_KEYS = new Set([
  'name', 'description', 'when_to_use', 'argument-hint', 'arguments', 'allowed-tools', 'disallowed-tools',
  'disable-model-invocation', 'user-invocable', 'model', 'effort', 'context', 'agent', 'paths', 'shell',
  'license', 'compatibility', 'version', 'author', 'tags',
]);
