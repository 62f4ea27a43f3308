import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HistoryStorage } from '@tessera/plugin-prompt-history';
import type { Subcommand } from '../io.js';
import { CommandError, commandGroup, formatTime, json, oneLine, table, tildify, usageError } from './shared.js';

const DEFAULT_LIMIT = 20;
/** `HistoryStorage` clamps to this. */
const MAX_LIMIT = 1000;

/**
 * `tessera history search`: the prompt history database of `@tessera/plugin-prompt-history`
 * (`<home>/.tessera/agent/history.db`), newest match first. A missing database is an empty
 * history; it is never created here.
 */
export const runHistoryCommand: Subcommand = commandGroup('history', 'Search the prompts you sent in earlier sessions (every project).', {
  search: {
    usage: 'search <text> [--limit N] [--json]',
    summary: `Prompts containing every word of <text> (prefix match), newest first, with time and directory. --limit defaults to ${DEFAULT_LIMIT} (at most ${MAX_LIMIT}).`,
    options: { limit: { type: 'string', short: 'n' }, json: { type: 'boolean' } },
    async run(args, io) {
      const text = args.positionals.join(' ');
      if (text.trim() === '') throw usageError('missing <text> to search for');
      const limit = parseLimit(args.values.limit);
      const path = join(io.home, '.tessera', 'agent', 'history.db');
      if (!existsSync(path)) {
        if (args.values.json === true) io.stdout('[]\n');
        else io.stdout(`No prompt history yet (${tildify(path, io.home)} does not exist).\n`);
        return 0;
      }
      let storage: HistoryStorage;
      try {
        storage = new HistoryStorage({ path, onWarning: () => undefined });
      } catch (error) {
        throw new CommandError(`cannot open the prompt history ${path}: ${(error as Error).message}. Move the file away to start a new history.`);
      }
      try {
        const matches = storage.search(text, limit);
        if (args.values.json === true) {
          io.stdout(json(matches.map((entry) => ({ id: entry.id, prompt: entry.prompt, createdAt: new Date(entry.createdAt * 1000).toISOString(), cwd: entry.cwd }))));
        } else if (matches.length === 0) {
          io.stdout(`No prompts match ${JSON.stringify(text)}.\n`);
        } else {
          const rows = matches.map((entry) => [formatTime(entry.createdAt * 1000), entry.cwd === null ? '-' : tildify(entry.cwd, io.home), oneLine(entry.prompt, 100)]);
          io.stdout(table(['TIME', 'DIRECTORY', 'PROMPT'], rows));
        }
      } finally {
        await storage.close();
      }
      return 0;
    },
  },
});

function parseLimit(value: string | boolean | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw usageError(`--limit must be a whole number from 1 to ${MAX_LIMIT} (got ${JSON.stringify(value)})`);
  return limit;
}
