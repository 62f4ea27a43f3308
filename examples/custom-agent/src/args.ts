import { parseArgs } from 'node:util';

/** What the `relnotes` command line says; `relnotesPresetOptions` turns it into preset options. */
export interface RelnotesFlags {
  /** The prompt, or a slash command (`/release-notes v1.0..HEAD`). */
  prompt: string;
  cwd?: string;
  database?: string;
  model?: string;
  resume?: string;
  continue: boolean;
  allow: string[];
  appendSystemPrompt?: string;
  maxTurns?: number;
  verbose: boolean;
  help: boolean;
}

/** A command line `relnotes` cannot run; exit code 2. */
export class RelnotesUsageError extends Error {
  readonly exitCode = 2;
}

interface OptionSpec {
  name: string;
  short?: string;
  value?: string;
  multiple?: boolean;
  description: string;
}

// One table: the parser's configuration and the --help text both come from it.
const OPTIONS: readonly OptionSpec[] = [
  { name: 'print', short: 'p', description: 'Print the answer and exit (the only mode; accepted for tessera compatibility)' },
  { name: 'cwd', value: 'dir', description: 'The git repository to work in (default: the current directory)' },
  { name: 'db', value: 'file', description: 'SQLite file sessions are kept in (default: ~/.relnotes/sessions.db)' },
  { name: 'model', value: 'id', description: 'Model id or alias (sonnet, opus, haiku)' },
  { name: 'resume', short: 'r', value: 'id', description: 'Continue a stored session by id' },
  { name: 'continue', short: 'c', description: "Continue this directory's most recent session" },
  { name: 'allow', value: 'rule', multiple: true, description: 'Allow another tool without asking, e.g. "Bash(git show:*)" (repeatable; GitLog is always allowed)' },
  { name: 'append-system-prompt', value: 'text', description: 'Text appended to the system prompt, after the style guide' },
  { name: 'max-turns', value: 'n', description: 'Stop after this many model rounds' },
  { name: 'verbose', description: 'Show tool calls on stderr' },
  { name: 'help', short: 'h', description: 'Show this help' },
];

export const USAGE = [
  'Usage: relnotes [options] <prompt | /release-notes <range> [path…]>',
  '',
  'A release-notes agent: reads git history with its GitLog tool and drafts notes in a house style.',
  '',
  'Examples:',
  '  relnotes /release-notes v1.0..HEAD',
  '  relnotes -p "What changed in packages/api since v2.3.0?"',
  '',
  'Options:',
  ...OPTIONS.map((option) => {
    const flag = `${option.short ? `-${option.short}, ` : '    '}--${option.name}${option.value ? ` <${option.value}>` : ''}`;
    return `  ${flag.padEnd(34)}${option.description}`;
  }),
  '',
  'Model: ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for a gateway), or OPENAI_API_KEY / OPENAI_BASE_URL.',
  '',
].join('\n');

/** argv (without `node` and the script) → flags. Throws `RelnotesUsageError` for anything it cannot read. */
export function parseRelnotesArgs(argv: readonly string[]): RelnotesFlags {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: Object.fromEntries(
        OPTIONS.map((option) => [option.name, { type: option.value ? 'string' : 'boolean', ...(option.short ? { short: option.short } : {}), ...(option.multiple ? { multiple: true } : {}) }]),
      ) as Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>,
    });
  } catch (error) {
    throw new RelnotesUsageError(`${(error as Error).message}\nSee relnotes --help.`);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const text = (name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const help = values.help === true;
  const prompt = parsed.positionals.join(' ').trim();
  if (prompt === '' && !help) throw new RelnotesUsageError('Give a prompt or a command, e.g. relnotes /release-notes v1.0..HEAD. See relnotes --help.');
  if (text('resume') !== undefined && values.continue === true) throw new RelnotesUsageError('Use either --resume <id> or --continue, not both.');
  const maxTurns = text('max-turns');
  if (maxTurns !== undefined && !(Number.isInteger(Number(maxTurns)) && Number(maxTurns) > 0)) throw new RelnotesUsageError(`--max-turns takes a positive whole number, got "${maxTurns}".`);
  const optional = <K extends keyof RelnotesFlags>(key: K, value: RelnotesFlags[K] | undefined): Partial<RelnotesFlags> => (value === undefined ? {} : { [key]: value });
  return {
    prompt,
    ...optional('cwd', text('cwd')),
    ...optional('database', text('db')),
    ...optional('model', text('model')),
    ...optional('resume', text('resume')),
    continue: values.continue === true,
    allow: (values.allow as string[] | undefined) ?? [],
    ...optional('appendSystemPrompt', text('append-system-prompt')),
    ...optional('maxTurns', maxTurns === undefined ? undefined : Number(maxTurns)),
    verbose: values.verbose === true,
    help,
  };
}
