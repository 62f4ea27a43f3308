import { copyFileSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { compareText, InvalidSessionIdError, isValidSessionId } from '@tessera/contracts';
import {
  FileSessionStorage,
  LEAF_MARKER_TYPE,
  migrateToCurrentVersion,
  readSessionFile,
  sessionDirFor,
  type SessionEntry,
  type SessionHeader,
} from '@tessera/plugin-session-store-jsonl';
import type { CliIO, Subcommand } from '../io.js';
import { CommandError, commandGroup, displayPath, formatTime, json, oneLine, oneOf, positionals, table, tildify, usageError, warn } from './shared.js';

const FORMATS = ['md', 'jsonl', 'html'] as const;
type ExportFormat = (typeof FORMATS)[number];

/**
 * `tessera sessions list|show|export|rm` over the CLI's session store: the JSONL files of
 * `@tessera/plugin-session-store-jsonl` under `<home>/.tessera/agent/sessions`. Reading never
 * changes a file (no migration rewrite, no corrupt-file move); a damaged line is skipped with
 * a warning naming the file and line.
 */
export const runSessionsCommand: Subcommand = commandGroup('sessions', 'Stored sessions (the JSONL session store under ~/.tessera/agent/sessions).', {
  list: {
    usage: 'list [--cwd-only|--all] [--json]',
    summary: 'Sessions of the current directory (default, --cwd-only) or of every project (--all), most recently updated first.',
    options: { 'cwd-only': { type: 'boolean' }, all: { type: 'boolean' }, json: { type: 'boolean' } },
    async run(args, io) {
      positionals(args, []);
      const all = oneOf(args, ['cwd-only', 'all'] as const) === 'all';
      const sessions: SessionFacts[] = [];
      for (const file of sessionFiles(io, all)) {
        const stored = await readStored(file, io);
        if (stored && (all || stored.header.cwd === io.cwd)) sessions.push(factsOf(stored));
      }
      sessions.sort((a, b) => compareText(b.updatedAt, a.updatedAt));
      if (args.values.json === true) {
        io.stdout(json(sessions));
        return 0;
      }
      if (sessions.length === 0) {
        io.stdout(all ? 'No stored sessions.\n' : `No sessions for ${io.cwd}. (\`tessera sessions list --all\` shows every project.)\n`);
        return 0;
      }
      const headers = ['ID', 'NAME', 'UPDATED', 'MESSAGES', ...(all ? ['DIRECTORY'] : []), 'FIRST PROMPT'];
      const rows = sessions.map((session) => [
        session.id,
        oneLine(session.name ?? '-', 30),
        formatTime(session.updatedAt),
        String(session.messageCount),
        ...(all ? [tildify(session.cwd, io.home)] : []),
        oneLine(session.firstPrompt ?? '-', 60),
      ]);
      io.stdout(table(headers, rows));
      return 0;
    },
  },
  show: {
    usage: 'show <id>',
    summary: 'The conversation on the current branch as text: prompts, replies, tool calls with their first argument, tool results shortened.',
    async run(args, io) {
      const [id] = positionals(args, ['<id>']) as [string];
      const stored = await findSession(io, id);
      io.stdout(renderText(factsOf(stored), transcriptOf(stored.entries)));
      return 0;
    },
  },
  export: {
    usage: 'export <id> [--format md|jsonl|html] [-o file]',
    summary: 'md: a Markdown transcript (default); jsonl: the session file byte for byte; html: one self-contained page. To stdout unless -o.',
    options: { format: { type: 'string', short: 'f' }, output: { type: 'string', short: 'o' } },
    async run(args, io) {
      const [id] = positionals(args, ['<id>']) as [string];
      const format = (args.values.format ?? 'md') as string;
      if (!(FORMATS as readonly string[]).includes(format)) throw usageError(`--format must be one of ${FORMATS.join(', ')} (got ${JSON.stringify(format)})`);
      const output = typeof args.values.output === 'string' ? resolve(io.cwd, args.values.output) : undefined;
      const stored = await findSession(io, id);
      if (format === 'jsonl') {
        if (output === undefined) io.stdout(readFileSync(stored.file, 'utf8'));
        else writeOutput(output, () => copyFileSync(stored.file, output));
      } else {
        const render = (format as ExportFormat) === 'html' ? renderHtml : renderMarkdown;
        const text = render(factsOf(stored), transcriptOf(stored.entries));
        if (output === undefined) io.stdout(text);
        else writeOutput(output, () => writeFileSync(output, text));
      }
      if (output !== undefined) io.stderr(`Exported session ${stored.header.id} (${format}) to ${displayPath(output, io)}\n`);
      return 0;
    },
  },
  rm: {
    usage: 'rm <id>',
    summary: "Delete that session's file (and nothing else).",
    async run(args, io) {
      const [id] = positionals(args, ['<id>']) as [string];
      const files = filesOf(io, id);
      if (files.length > 1) throw new CommandError(`session ${id} has ${files.length} files (${files.join(', ')}); delete the one you mean by hand`);
      const [file] = files as [string];
      try {
        unlinkSync(file);
      } catch (error) {
        throw new CommandError(`cannot delete ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); check its permissions`);
      }
      io.stdout(`Deleted session ${id} (${displayPath(file, io)})\n`);
      return 0;
    },
  },
});

interface StoredSession {
  file: string;
  header: SessionHeader;
  /** File order; entries without an id are left out. */
  entries: SessionEntry[];
}

const storage = new FileSessionStorage();

function agentDir(io: CliIO): string {
  return join(io.home, '.tessera', 'agent');
}

/** `*.jsonl` files of this project's session directory, or of every project's. */
function sessionFiles(io: CliIO, all: boolean): string[] {
  const root = join(agentDir(io), 'sessions');
  const dirs = all ? storage.listDirsSync(root).map((dir) => join(root, dir)) : [sessionDirFor(io.cwd, agentDir(io))];
  return dirs.flatMap((dir) => storage.listFilesSync(dir, '*.jsonl').map((name) => join(dir, name)));
}

/**
 * The files of session `id`, found by name (`<time>_<id>.jsonl`, as the store writes them).
 * The id is checked with the contracts' session-id rule first and is only ever compared with
 * names read from the directory, never joined into a path.
 */
function filesOf(io: CliIO, id: string): string[] {
  if (!isValidSessionId(id)) throw usageError(new InvalidSessionIdError(id).message);
  const files = sessionFiles(io, true).filter((file) => idFromFileName(basename(file)) === id);
  if (files.length === 0) throw new CommandError(`no session ${id}; see \`tessera sessions list\``);
  return files;
}

/** The id after the first `_` of `<time>_<id>.jsonl` (the time part has none). */
function idFromFileName(name: string): string | undefined {
  return /^[^_]+_(.+)\.jsonl$/.exec(name)?.[1];
}

async function findSession(io: CliIO, id: string): Promise<StoredSession> {
  const files = filesOf(io, id).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (files.length > 1) warn(io, `session ${id} has ${files.length} files; using the newest, ${files[0]}`);
  const stored = await readStored(files[0] as string, io);
  if (stored === undefined) throw new CommandError(`session ${id} cannot be read (see the warning above); export it with --format jsonl to look at the raw file`);
  return stored;
}

/** Reads a session file without changing it; problems become warnings naming the file and line. */
async function readStored(file: string, io: CliIO): Promise<StoredSession | undefined> {
  const load = await readSessionFile(storage, file);
  if (load.status === 'invalid') {
    warn(io, `${file}: not a readable session file (${load.reason}); skipped`);
    return undefined;
  }
  if (load.status !== 'ok') return undefined;
  for (const problem of load.problems) warn(io, `${file}:${problem.line}: ${problem.reason}; the line was skipped`);
  try {
    migrateToCurrentVersion(load.fileEntries, file);
  } catch (error) {
    warn(io, `${file}: ${(error as Error).message}`);
    return undefined;
  }
  const [header, ...rest] = load.fileEntries as [SessionHeader, ...SessionEntry[]];
  const entries = rest.filter((entry) => typeof entry.id === 'string');
  if (entries.length < rest.length) warn(io, `${file}: ${rest.length - entries.length} entries without an id were ignored`);
  return { file, header, entries };
}

/** Listing facts over every branch, as the store's `SessionTree.list` counts them, plus the first prompt. */
function factsOf({ file, header, entries }: StoredSession): SessionFacts {
  let updatedAt = header.timestamp;
  let messageCount = 0;
  let infoName: string | undefined;
  let firstPrompt: string | undefined;
  for (const entry of entries) {
    if (entry.timestamp > updatedAt) updatedAt = entry.timestamp;
    if (entry.type === 'message') {
      messageCount += 1;
      if (firstPrompt === undefined && entry.message.role === 'user') firstPrompt = promptText(entry.message.content);
    }
    const name = (entry as { type: string; name?: unknown }).type === 'session_info' ? (entry as { name?: unknown }).name : undefined;
    if (typeof name === 'string') infoName = name;
  }
  const name = header.title ?? infoName;
  return { id: header.id, ...(name === undefined ? {} : { name }), cwd: header.cwd, createdAt: header.timestamp, updatedAt, messageCount, ...(firstPrompt === undefined ? {} : { firstPrompt }), file };
}

function promptText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const text = content.flatMap((block: { type?: unknown; text?: unknown }) => (block?.type === 'text' && typeof block.text === 'string' ? [block.text] : [])).join(' ');
  return text === '' ? undefined : text;
}

function writeOutput(output: string, write: () => void): void {
  try {
    write();
  } catch (error) {
    throw new CommandError(`cannot write ${output} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); check that the directory exists and is writable`);
  }
}

// ------------------------------------------------------------------ transcript

/** What `list` shows of a session (also its `--json` shape). */
export interface SessionFacts {
  id: string;
  name?: string;
  cwd: string;
  createdAt: string;
  updatedAt: string;
  /** `message` entries on every branch. */
  messageCount: number;
  firstPrompt?: string;
  file: string;
}

type TranscriptItem =
  | { kind: 'user' | 'assistant' | 'system' | 'note'; text: string }
  | { kind: 'tool_call'; name: string; input: unknown }
  | { kind: 'tool_result'; name: string; text: string; isError: boolean };

/** customType of the `custom` message that carries a kernel `system` message (the store's `pi-messages.ts`). */
const SYSTEM_MESSAGE_TYPE = 'tessera.system';

/** The readable items of the current branch, root first. */
function transcriptOf(entries: readonly SessionEntry[]): TranscriptItem[] {
  return branchOf(entries).flatMap(itemsOf);
}

/**
 * Root → leaf, the leaf being the last entry (a `tessera.leaf` marker stands for its parent),
 * as the store resumes. A parent that is missing because its line was damaged is replaced by
 * the entry on the line before, so one bad line does not hide the conversation before it.
 */
function branchOf(entries: readonly SessionEntry[]): SessionEntry[] {
  const position = new Map(entries.map((entry, index) => [entry.id, index]));
  let index: number | undefined = entries.length - 1;
  const last = entries[index];
  if (last?.type === 'custom' && last.customType === LEAF_MARKER_TYPE && last.parentId !== null) index = position.get(last.parentId) ?? index;
  const path: SessionEntry[] = [];
  const seen = new Set<number>();
  while (index !== undefined && index >= 0 && !seen.has(index)) {
    seen.add(index);
    const entry = entries[index] as SessionEntry;
    path.push(entry);
    if (entry.parentId === null) break;
    index = position.get(entry.parentId) ?? index - 1;
  }
  return path.reverse();
}

function itemsOf(entry: SessionEntry): TranscriptItem[] {
  switch (entry.type) {
    case 'message':
      return messageItems(entry.message);
    case 'compaction':
      return [{ kind: 'note', text: `Conversation compacted. Summary: ${entry.summary}` }];
    case 'branch_summary':
      return [{ kind: 'note', text: `Summary of another branch: ${entry.summary}` }];
    case 'custom_message':
      return entry.display ? [{ kind: 'note', text: `[${entry.customType}] ${textOf(entry.content)}` }] : [];
    case 'model_change':
      return [{ kind: 'note', text: `Model: ${entry.model ?? `${entry.provider ?? '?'}/${entry.modelId ?? '?'}`}` }];
    default:
      return [];
  }
}

/** pi's message shapes (what the store writes), and the kernel shapes early files hold. */
function messageItems(message: Record<string, unknown>): TranscriptItem[] {
  switch (message.role) {
    case 'user':
      return [{ kind: 'user', text: textOf(message.content) }];
    case 'system':
      return [{ kind: 'system', text: textOf(message.content) }];
    case 'assistant': {
      const items: TranscriptItem[] = [];
      for (const block of Array.isArray(message.content) ? (message.content as Array<Record<string, unknown> | null>) : [{ type: 'text', text: message.content }]) {
        if (block?.type === 'text' && typeof block.text === 'string' && block.text.trim() !== '') {
          const previous = items[items.length - 1];
          if (previous?.kind === 'assistant') previous.text += `\n${block.text}`;
          else items.push({ kind: 'assistant', text: block.text });
        } else if (block?.type === 'toolCall' || block?.type === 'tool_use') {
          items.push({ kind: 'tool_call', name: String(block.name ?? '?'), input: block.arguments ?? block.input });
        }
      }
      return items;
    }
    case 'toolResult':
      return [{ kind: 'tool_result', name: String(message.toolName ?? ''), text: textOf(message.content), isError: message.isError === true }];
    case 'tool':
      return (Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : []).map((result) => ({
        kind: 'tool_result',
        name: String(result?.toolName ?? ''),
        text: textOf(result?.content),
        isError: result?.isError === true,
      }));
    case 'custom':
      if (message.customType === SYSTEM_MESSAGE_TYPE) return [{ kind: 'system', text: textOf(message.content) }];
      return message.display === false ? [] : [{ kind: 'note', text: `[${String(message.customType)}] ${textOf(message.content)}` }];
    case 'bashExecution':
      return [
        { kind: 'tool_call', name: 'Bash', input: { command: message.command } },
        { kind: 'tool_result', name: 'Bash', text: String(message.output ?? ''), isError: false },
      ];
    case 'compactionSummary':
    case 'branchSummary':
      return [{ kind: 'note', text: `Summary: ${String(message.summary ?? '')}` }];
    default:
      return [{ kind: 'note', text: `[${String(message.role)} message]` }];
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: Record<string, unknown> | null) => (block?.type === 'text' ? String(block.text ?? '') : block?.type === 'image' ? '[image]' : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** `Bash(ls -la)`: a call with its first argument on one line. */
function callLabel(name: string, input: unknown): string {
  const first = input !== null && typeof input === 'object' && !Array.isArray(input) ? Object.values(input)[0] : input;
  const argument = first === undefined ? '' : oneLine(typeof first === 'string' ? first : (JSON.stringify(first) ?? ''), 80);
  return `${name}(${argument})`;
}

const RESULT_LINES = 4;

function renderText(facts: SessionFacts, items: readonly TranscriptItem[]): string {
  const indent = (text: string, first: string, rest = '  ') => text.split('\n').map((line, index) => `${index === 0 ? first : rest}${line}`).join('\n');
  const blocks = items.map((item) => {
    switch (item.kind) {
      case 'user':
        return indent(item.text, '> ');
      case 'assistant':
        return indent(item.text, '⏺ ');
      case 'system':
        return indent(item.text, '[system] ');
      case 'note':
        return indent(item.text, '· ');
      case 'tool_call':
        return `⏺ ${callLabel(item.name, item.input)}`;
      case 'tool_result': {
        const lines = item.text.trimEnd().split('\n');
        const shown = lines.slice(0, RESULT_LINES).map((line) => (line.length > 160 ? `${line.slice(0, 159)}…` : line));
        if (lines.length > RESULT_LINES) shown.push(`… +${lines.length - RESULT_LINES} lines`);
        const body = item.text.trim() === '' ? '(no output)' : shown.join('\n');
        return indent(item.isError ? `Error: ${body}` : body, '  ⎿  ', '     ');
      }
    }
  });
  const title = `Session ${facts.id}${facts.name === undefined ? '' : ` — ${facts.name}`}`;
  const about = `${facts.cwd} · created ${formatTime(facts.createdAt)} · updated ${formatTime(facts.updatedAt)} · ${facts.messageCount} messages`;
  // A result sits right under its call, as in Claude Code's transcript.
  const body = blocks.map((block, index) => (index === 0 ? '' : items[index]?.kind === 'tool_result' ? '\n' : '\n\n') + block).join('');
  return `${title}\n${about}\n\n${blocks.length > 0 ? body : '(no messages)'}\n`;
}

/** A code fence longer than any backtick run in `text`. */
function fenced(text: string, language = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text.replace(/\n$/, '')}\n${fence}`;
}

function renderMarkdown(facts: SessionFacts, items: readonly TranscriptItem[]): string {
  const parts = [
    `# ${facts.name ?? `Session ${facts.id}`}`,
    [`- Session: \`${facts.id}\``, `- Directory: \`${facts.cwd}\``, `- Created: ${facts.createdAt}`, `- Updated: ${facts.updatedAt}`, `- Messages: ${facts.messageCount}`].join('\n'),
  ];
  for (const item of items) parts.push(markdownOf(item));
  return `${parts.join('\n\n')}\n`;
}

function markdownOf(item: TranscriptItem): string {
  switch (item.kind) {
    case 'user':
    case 'assistant':
    case 'system':
      return `## ${item.kind[0]!.toUpperCase()}${item.kind.slice(1)}\n\n${item.text}`;
    case 'note':
      return `> ${item.text.replace(/\n/g, '\n> ')}`;
    case 'tool_call':
      return `**Tool call:** \`${item.name}\`\n\n${fenced(JSON.stringify(item.input ?? {}, null, 2), 'json')}`;
    case 'tool_result':
      return `**${item.isError ? 'Tool error' : 'Tool result'}:** \`${item.name}\`\n\n${fenced(item.text)}`;
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const PAGE_STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}' +
  'section{margin:1.25rem 0}h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.05em;color:#666;margin:0 0 .25rem}' +
  '.text{white-space:pre-wrap}.user .text{background:#f2f4f8;padding:.5rem .75rem;border-radius:6px}' +
  'pre{background:#f6f6f6;padding:.5rem .75rem;overflow-x:auto;white-space:pre-wrap;word-break:break-word}.error pre{background:#fdecec}' +
  '.note{color:#666;font-style:italic;white-space:pre-wrap}dl{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;color:#555}dd{margin:0}';

function renderHtml(facts: SessionFacts, items: readonly TranscriptItem[]): string {
  const title = escapeHtml(facts.name ?? `Session ${facts.id}`);
  const about: Array<[string, string]> = [['Session', facts.id], ['Directory', facts.cwd], ['Created', facts.createdAt], ['Updated', facts.updatedAt], ['Messages', String(facts.messageCount)]];
  const sections = items.map((item) => {
    switch (item.kind) {
      case 'user':
      case 'assistant':
      case 'system':
        return `<section class="${item.kind}"><h2>${item.kind}</h2><div class="text">${escapeHtml(item.text)}</div></section>`;
      case 'note':
        return `<section class="note">${escapeHtml(item.text)}</section>`;
      case 'tool_call':
        return `<section class="tool"><details><summary>${escapeHtml(callLabel(item.name, item.input))}</summary><pre>${escapeHtml(JSON.stringify(item.input ?? {}, null, 2))}</pre></details></section>`;
      case 'tool_result':
        return `<section class="result${item.isError ? ' error' : ''}"><details><summary>${item.isError ? 'Error' : 'Result'} of ${escapeHtml(item.name)}</summary><pre>${escapeHtml(item.text)}</pre></details></section>`;
    }
  });
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    // Nothing outside the page is loaded, whatever the transcript contains.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title><style>${PAGE_STYLE}</style></head><body><main>`,
    `<h1>${title}</h1>`,
    `<dl>${about.map(([term, value]) => `<dt>${term}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>`,
    ...sections,
    '</main></body></html>',
    '',
  ].join('\n');
}
