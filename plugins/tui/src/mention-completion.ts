import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { CombinedAutocompleteProvider, fuzzyFilter, type AutocompleteItem, type AutocompleteProvider, type AutocompleteSuggestions, type SlashCommand } from '@mariozechner/pi-tui';

/** At most this many files are listed for `@` completion (a huge tree is cut, not walked forever). */
const MAX_FILES = 20_000;
const MAX_SUGGESTIONS = 20;
/** Never offered (and never descended into) when there is no git to ask. */
const SKIPPED = new Set(['.git', 'node_modules', '.hg', '.svn', 'dist', 'build', '.next', '.cache', 'coverage', '.venv', '__pycache__']);
/** How long a file list is reused before it is read again. */
const LIST_TTL_MS = 5_000;

/** The workspace's files, relative and `/`-separated: git's view (ignores respected) or a bounded walk. */
export async function listWorkspaceFiles(root: string): Promise<string[]> {
  const fromGit = await new Promise<string[] | undefined>((resolve) => {
    execFile('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, maxBuffer: 64 * 1024 * 1024, timeout: 5_000 }, (error, stdout) => {
      resolve(error ? undefined : stdout.split('\0').filter((file) => file !== '').slice(0, MAX_FILES));
    });
  });
  if (fromGit) return fromGit;
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    if (files.length >= MAX_FILES) return;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (files.length >= MAX_FILES) return;
      if (SKIPPED.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.push(relative(root, path).split('\\').join('/'));
    }
  };
  await walk(root);
  return files;
}

/**
 * Slash commands (with argument hints and subcommands) as pi-tui's provider offers them, and
 * `@` mentions fuzzy-matched over the workspace's files, respecting `.gitignore`.
 */
export class WorkspaceCompletion implements AutocompleteProvider {
  private readonly commands: CombinedAutocompleteProvider;
  private files: { list: Promise<string[]>; at: number } | undefined;

  constructor(
    commands: readonly SlashCommand[],
    private readonly root: string,
  ) {
    this.commands = new CombinedAutocompleteProvider([...commands], root, null);
  }

  async getSuggestions(lines: string[], cursorLine: number, cursorCol: number, options: { signal: AbortSignal; force?: boolean }): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? '').slice(0, cursorCol);
    const mention = /(?:^|\s)(@[^\s]*)$/.exec(before)?.[1];
    if (mention === undefined) return this.commands.getSuggestions(lines, cursorLine, cursorCol, options);
    const query = mention.slice(1);
    const files = await this.workspaceFiles();
    if (options.signal.aborted) return null;
    const directories = new Set<string>();
    for (const file of files) {
      const slash = file.lastIndexOf('/');
      if (slash > 0) directories.add(`${file.slice(0, slash)}/`);
    }
    const candidates = [...[...directories].map((dir) => ({ path: dir })), ...files.map((file) => ({ path: file }))];
    const matched = (query === '' ? candidates.filter((candidate) => !candidate.path.slice(0, -1).includes('/')) : fuzzyFilter(candidates, query, (candidate) => candidate.path)).slice(0, MAX_SUGGESTIONS);
    if (matched.length === 0) return null;
    const items: AutocompleteItem[] = matched.map((candidate) => ({ value: `@${candidate.path}`, label: candidate.path }));
    return { items, prefix: mention };
  }

  applyCompletion(lines: string[], cursorLine: number, cursorCol: number, item: AutocompleteItem, prefix: string): { lines: string[]; cursorLine: number; cursorCol: number } {
    return this.commands.applyCompletion(lines, cursorLine, cursorCol, item, prefix);
  }

  shouldTriggerFileCompletion(lines: string[], cursorLine: number, cursorCol: number): boolean {
    return this.commands.shouldTriggerFileCompletion(lines, cursorLine, cursorCol);
  }

  private workspaceFiles(): Promise<string[]> {
    if (!this.files || Date.now() - this.files.at > LIST_TTL_MS) this.files = { list: listWorkspaceFiles(this.root), at: Date.now() };
    return this.files.list;
  }
}
