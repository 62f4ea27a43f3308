import {
  USER_LOCAL_CATEGORIES,
  USER_LOCAL_MEMORY_CATEGORIES,
  type UserLocalCategory,
  type UserLocalCategorySummary,
  type UserLocalJsonValue,
  type UserLocalMemoryCategory,
  type UserLocalMemoryItem,
  type UserLocalMemoryItemInput,
  type UserLocalMemoryItemProjection,
  type UserLocalRoot,
  type UserLocalStorage,
  type UserLocalStorageProjection,
} from '@tessera/contracts';
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readTextIfExists, writeFileAtomic } from './atomic-write.js';
import { InvalidUserLocalMemoryItemError, UserLocalMemoryFileError } from './memory-errors.js';
import { resolveUserLocalRoot } from './user-local-root.js';

export const USER_LOCAL_MEMORY_FILE = 'user-local-memory.json';

/** What each item category may influence; shown with every item. */
const DISPLAY_NAVIGATION_RULES: Readonly<Record<UserLocalMemoryCategory, string>> = {
  'view-preference': 'May choose which view a host opens by default; never runs a command.',
  'last-visible-cwd': 'May preselect the folder a host shows; never becomes a command cwd by itself.',
  'background-selection': 'May preselect a background task in a list; never starts, stops or resumes one.',
  'task-association': 'May show which task a session belongs to; never selects a harness command.',
  'display-preference': 'May change how output is displayed; never changes what runs.',
  'inspection-choice': 'May remember which inspector a person chose; never grants a permission.',
};

interface StoredItem {
  category: UserLocalMemoryCategory;
  key: string;
  value: UserLocalJsonValue;
  summary: string;
  source: string;
  scope: 'user' | 'repository';
  repositoryRoot?: string;
  createdAt: string;
  updatedAt: string;
  enabled: boolean;
}

export interface DefaultUserLocalStorageOptions {
  /** The wanted root (already checked to be a non-empty absolute path, or not). */
  readonly root: string;
  /** The session's (or process's) cwd; its repository must not hold the root. */
  readonly cwd: string;
  readonly now: () => number;
}

/**
 * `UserLocalStorage` on files under the validated root: one folder per category, user-local
 * memory items in `memory-projections/user-local-memory.json`. The root is validated on the
 * first call and again never (the answer is kept); every write goes under it.
 */
export class DefaultUserLocalStorage implements UserLocalStorage {
  private validated: Promise<UserLocalRoot> | undefined;

  constructor(private readonly options: DefaultUserLocalStorageOptions) {}

  resolveRoot(): Promise<UserLocalRoot> {
    this.validated ??= resolveUserLocalRoot(this.options.root, this.options.cwd);
    // A failed validation is not kept: a person may fix the folder and try again.
    return this.validated.catch((error: unknown) => {
      this.validated = undefined;
      throw error;
    });
  }

  async categoryLocation(category: UserLocalCategory, options: { readonly create?: boolean } = {}): Promise<string> {
    if (!USER_LOCAL_CATEGORIES.includes(category)) {
      throw new InvalidUserLocalMemoryItemError('category', `must be one of ${USER_LOCAL_CATEGORIES.join(', ')}, got ${JSON.stringify(category)}`);
    }
    const location = join((await this.resolveRoot()).root, category);
    if (options.create === true) await mkdir(location, { recursive: true });
    return location;
  }

  async inspect(): Promise<UserLocalStorageProjection> {
    const root = await this.resolveRoot();
    const categories: UserLocalCategorySummary[] = [];
    for (const category of USER_LOCAL_CATEGORIES) categories.push(await summarize(category, join(root.root, category)));
    return { ...root, categories, memoryItems: await this.listMemoryItems() };
  }

  async setMemoryItem(input: UserLocalMemoryItemInput): Promise<UserLocalMemoryItemProjection> {
    checkItemInput(input);
    const { repositoryRoot } = await this.resolveRoot();
    const items = await this.readItems();
    const now = new Date(this.options.now()).toISOString();
    const index = items.findIndex((item) => item.category === input.category && item.key === input.key);
    const previous = index === -1 ? undefined : items[index];
    const scope = input.scope ?? 'user';
    const item: StoredItem = {
      category: input.category,
      key: input.key,
      value: input.value,
      summary: input.summary ?? `${input.category} ${input.key}`,
      source: input.source ?? 'user',
      scope,
      ...(scope === 'repository' ? { repositoryRoot } : {}),
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
      enabled: previous?.enabled ?? true,
    };
    if (index === -1) items.push(item);
    else items[index] = item;
    await this.writeItems(items);
    return this.project(item, await this.itemsPath());
  }

  async listMemoryItems(filter: { readonly category?: UserLocalMemoryCategory } = {}): Promise<UserLocalMemoryItemProjection[]> {
    const path = await this.itemsPath();
    return (await this.readItems()).filter((item) => filter.category === undefined || item.category === filter.category).map((item) => this.project(item, path));
  }

  async inspectMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<UserLocalMemoryItem | undefined> {
    const item = (await this.readItems()).find((stored) => stored.category === category && stored.key === key);
    return item === undefined ? undefined : { ...this.project(item, await this.itemsPath()), value: item.value };
  }

  disableMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean> {
    return this.setEnabled(category, key, false);
  }

  enableMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean> {
    return this.setEnabled(category, key, true);
  }

  async deleteMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean> {
    const items = await this.readItems();
    const rest = items.filter((item) => !(item.category === category && item.key === key));
    if (rest.length === items.length) return false;
    await this.writeItems(rest);
    return true;
  }

  async readEnabledMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<UserLocalJsonValue | null> {
    const item = (await this.readItems()).find((stored) => stored.category === category && stored.key === key);
    return item === undefined || !item.enabled ? null : item.value;
  }

  private async setEnabled(category: UserLocalMemoryCategory, key: string, enabled: boolean): Promise<boolean> {
    const items = await this.readItems();
    const item = items.find((stored) => stored.category === category && stored.key === key);
    if (item === undefined) return false;
    item.enabled = enabled;
    item.updatedAt = new Date(this.options.now()).toISOString();
    await this.writeItems(items);
    return true;
  }

  private async itemsPath(): Promise<string> {
    return join(await this.categoryLocation('memory-projections'), USER_LOCAL_MEMORY_FILE);
  }

  private async readItems(): Promise<StoredItem[]> {
    const path = await this.itemsPath();
    const text = await readTextIfExists(() => readFile(path, 'utf8'));
    if (text === undefined) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UserLocalMemoryFileError(path, 'not JSON');
    }
    const items = (parsed as { items?: unknown }).items;
    if (!Array.isArray(items)) throw new UserLocalMemoryFileError(path, 'expected { "version": 1, "items": [...] }');
    return items as StoredItem[];
  }

  private async writeItems(items: readonly StoredItem[]): Promise<void> {
    await writeFileAtomic(join(await this.categoryLocation('memory-projections', { create: true }), USER_LOCAL_MEMORY_FILE), `${JSON.stringify({ version: 1, items }, null, 2)}\n`);
  }

  private project(item: StoredItem, storageLocation: string): UserLocalMemoryItemProjection {
    return {
      category: item.category,
      key: item.key,
      summary: item.summary,
      valueSummary: summarizeValue(item.value),
      source: item.source,
      scope: item.scope,
      ...(item.repositoryRoot === undefined ? {} : { repositoryRoot: item.repositoryRoot }),
      storageLocation,
      createdAt: item.createdAt,
      updatedAt: item.updatedAt,
      enabled: item.enabled,
      displayNavigationRule: DISPLAY_NAVIGATION_RULES[item.category],
      canDelete: true,
      canDisable: item.enabled,
      commandExecutionEffect: 'none',
    };
  }
}

async function summarize(category: UserLocalCategory, location: string): Promise<UserLocalCategorySummary> {
  try {
    const [entries, info] = await Promise.all([readdir(location, { withFileTypes: true }), stat(location)]);
    return { category, location, exists: true, items: entries.filter((entry) => entry.isFile()).length, updatedAt: info.mtime.toISOString() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return { category, location, exists: false, items: 0 };
  }
}

function summarizeValue(value: UserLocalJsonValue): string {
  const text = JSON.stringify(value);
  return text.length <= 80 ? text : `${text.slice(0, 79)}…`;
}

function checkItemInput(input: UserLocalMemoryItemInput): void {
  if (typeof input !== 'object' || input === null) throw new InvalidUserLocalMemoryItemError('item', 'must be an object');
  if (!USER_LOCAL_MEMORY_CATEGORIES.includes(input.category)) {
    throw new InvalidUserLocalMemoryItemError('category', `must be one of ${USER_LOCAL_MEMORY_CATEGORIES.join(', ')}, got ${JSON.stringify(input.category)}`);
  }
  // eslint-disable-next-line no-control-regex
  if (typeof input.key !== 'string' || input.key.length === 0 || input.key.length > 200 || /[\u0000-\u001f\u007f]/.test(input.key)) {
    throw new InvalidUserLocalMemoryItemError('key', 'must be 1-200 printable characters');
  }
  if (input.scope !== undefined && input.scope !== 'user' && input.scope !== 'repository') throw new InvalidUserLocalMemoryItemError('scope', 'must be "user" or "repository"');
  for (const field of ['summary', 'source'] as const) {
    if (input[field] !== undefined && typeof input[field] !== 'string') throw new InvalidUserLocalMemoryItemError(field, 'must be a string');
  }
  if (!isJsonValue(input.value, 0)) throw new InvalidUserLocalMemoryItemError('value', 'must be a JSON value (string, finite number, boolean, null, array or plain object), at most 16 levels deep');
}

function isJsonValue(value: unknown, depth: number): boolean {
  if (depth > 16) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((entry) => isJsonValue(entry, depth + 1));
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value).every((entry) => isJsonValue(entry, depth + 1));
  return false;
}
