import { getPath } from './context.js';
import type { SessionEntry } from './entries.js';
import { SessionEntryNotFoundError } from './errors.js';
import { generateEntryId } from './migrations.js';
import { copyWith } from '@tessera/contracts';

/** One node of `getTree()`: an entry, its children (oldest first) and its label. */
export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
}

/**
 * The in-memory index of a session: entries in insertion order, by id, by parent, labels
 * and the leaf pointer. Appending is the only mutation of the entry set.
 */
export class SessionTree {
  entries: SessionEntry[] = [];
  readonly byId = new Map<string, SessionEntry>();
  readonly #children = new Map<string | null, SessionEntry[]>();
  /** How many entries `#children` covers; it is caught up lazily, so appends stay cheap. */
  #childrenIndexed = 0;
  readonly #labels = new Map<string, string>();
  leafId: string | null = null;
  #hasAssistant = false;
  /** `name` of the last pi `session_info` entry that has a string one. */
  #infoName: string | undefined;
  /**
   * How many entries, from the first, form one chain: each hangs from the one before it
   * (every file that was never branched). With unique ids the walk from the last of them
   * passes every one and ends at the first, whatever the first hangs from (nothing, a missing
   * entry, or one of the chain, where the walk stops at the repeat), so `getBranch` copies the
   * list instead of walking the links.
   */
  #chain = 0;
  #chainTailId: string | undefined;
  #indexed = 0;

  /** Replaces everything with `entries`; the leaf becomes the last entry (the leaf is not persisted). */
  reset(entries: SessionEntry[]): void {
    this.entries = [];
    this.byId.clear();
    this.#children.clear();
    this.#childrenIndexed = 0;
    this.#labels.clear();
    this.#hasAssistant = false;
    this.#infoName = undefined;
    this.#chain = 0;
    this.#chainTailId = undefined;
    this.#indexed = 0;
    this.leafId = null;
    for (const entry of entries) this.add(entry);
  }

  /**
   * Like `reset`, but takes ownership of `entries` instead of copying it (large loads).
   * Entries without a string id are left out (then, and only then, a filtered copy is kept);
   * returns how many.
   */
  adopt(entries: SessionEntry[]): number {
    this.reset([]);
    let usable = entries;
    for (let index = 0; index < entries.length; index += 1) {
      const entry = entries[index] as SessionEntry;
      if (typeof entry.id !== 'string') {
        usable = entries.filter((candidate) => typeof candidate.id === 'string');
        break;
      }
      this.#index(entry);
    }
    if (usable !== entries) {
      this.reset([]);
      for (const entry of usable) this.#index(entry);
    }
    this.entries = usable;
    return entries.length - usable.length;
  }

  add(entry: SessionEntry): void {
    this.entries.push(entry);
    this.#index(entry);
  }

  #index(entry: SessionEntry): void {
    this.byId.set(entry.id, entry);
    if (this.#chain === this.#indexed && (this.#chain === 0 || entry.parentId === this.#chainTailId)) {
      this.#chain += 1;
      this.#chainTailId = entry.id;
    }
    this.#indexed += 1;
    if (entry.type === 'label') {
      if (typeof entry.label === 'string') this.#labels.set(entry.targetId, entry.label);
      else this.#labels.delete(entry.targetId);
    } else if (entry.type === 'message') {
      if (entry.message.role === 'assistant') this.#hasAssistant = true;
    } else if ((entry.type as string) === 'session_info') {
      const { name } = entry as { name?: unknown };
      if (typeof name === 'string') this.#infoName = name;
    }
    this.leafId = entry.id;
  }

  get hasAssistant(): boolean {
    return this.#hasAssistant;
  }

  /** `name` of the last pi `session_info` entry with one (kept while indexing, so no scan). */
  get sessionInfoName(): string | undefined {
    return this.#infoName;
  }

  newId(): string {
    return generateEntryId(this.byId);
  }

  require(id: string): SessionEntry {
    const entry = this.byId.get(id);
    if (!entry) throw new SessionEntryNotFoundError(id);
    return entry;
  }

  getLabel(id: string): string | undefined {
    return this.#labels.get(id);
  }

  getChildren(id: string): SessionEntry[] {
    for (; this.#childrenIndexed < this.entries.length; this.#childrenIndexed += 1) {
      const entry = this.entries[this.#childrenIndexed] as SessionEntry;
      let siblings = this.#children.get(entry.parentId);
      if (!siblings) this.#children.set(entry.parentId, (siblings = []));
      siblings.push(entry);
    }
    return [...(this.#children.get(id) ?? [])];
  }

  /** Root→`fromId` (default: the leaf); `[]` when the leaf is null. */
  getBranch(fromId?: string): SessionEntry[] {
    const target = fromId ?? this.leafId;
    if (target === null) return [];
    const leaf = this.require(target);
    const count = this.entries.length;
    // One chain of unique ids ending at the leaf: the path is every entry, in file order.
    if (this.#chain === count && this.byId.size === count && this.entries[count - 1] === leaf) return this.entries.slice();
    return getPath(leaf, this.byId);
  }

  /**
   * The root→`leafId` path as the entries of a new session: re-chained without the label
   * entries on it, then one label entry per labelled entry, so labels survive a fork.
   */
  copyBranch(leafId: string, timestamp: string): SessionEntry[] {
    const path = this.getBranch(leafId);
    const taken = new Set(path.map((entry) => entry.id));
    const entries: SessionEntry[] = [];
    let previous: string | null = null;
    for (const entry of path) {
      if (entry.type === 'label') continue;
      // copyWith: a spread copy gets new properties slowly on Node 20 (docs/adr/0003), once per entry here.
      entries.push(copyWith(entry, { parentId: previous }) as SessionEntry);
      previous = entry.id;
    }
    for (const entry of [...entries]) {
      const label = this.getLabel(entry.id);
      if (label === undefined) continue;
      const id = generateEntryId(taken);
      taken.add(id);
      entries.push({ type: 'label', id, parentId: previous, timestamp, targetId: entry.id, label });
      previous = id;
    }
    return entries;
  }

  /** Roots are entries whose parent is null, themselves or missing; children are sorted by timestamp. */
  getTree(): SessionTreeNode[] {
    const nodes = new Map<string, SessionTreeNode>();
    for (const entry of this.entries) {
      const label = this.#labels.get(entry.id);
      nodes.set(entry.id, label === undefined ? { entry, children: [] } : { entry, children: [], label });
    }
    const roots: SessionTreeNode[] = [];
    for (const entry of this.entries) {
      const node = nodes.get(entry.id) as SessionTreeNode;
      const parent = entry.parentId === null || entry.parentId === entry.id ? undefined : nodes.get(entry.parentId);
      (parent ? parent.children : roots).push(node);
    }
    const byTime = (a: SessionTreeNode, b: SessionTreeNode): number =>
      a.entry.timestamp < b.entry.timestamp ? -1 : a.entry.timestamp > b.entry.timestamp ? 1 : 0;
    for (const node of nodes.values()) if (node.children.length > 1) node.children.sort(byTime);
    return roots;
  }
}
