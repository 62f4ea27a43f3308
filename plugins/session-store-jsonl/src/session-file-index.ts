import { basename, dirname, join } from 'node:path';

const JSONL = '.jsonl';

/** A string that holds its own characters (a substring would keep the whole string it was cut from alive). */
function ownCopy(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf8').toString('utf8');
}

/** A lowercase UUID, as Tessera, pi and Claude Code name their sessions. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The time prefix of a session file name: an ISO instant with `:` and `.` written as `-`. */
const FILE_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2})-(\d{2})-(\d{2})-(\d{3}Z)$/;

/** The prefix `<time>` of `<time>_<id>.jsonl` as epoch ms, when formatting the ms gives the same text back. */
function fileTimeMs(text: string): number | undefined {
  const parts = FILE_TIME.exec(text);
  if (!parts) return undefined;
  const ms = Date.parse(`${parts[1]}:${parts[2]}:${parts[3]}.${parts[4]}`);
  return Number.isFinite(ms) && formatFileTime(ms) === text ? ms : undefined;
}

function formatFileTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, '-');
}

/** Slots of the packed table when it is first made; it doubles when three quarters are used. */
const INITIAL_SLOTS = 256;

/**
 * Session files by id, for the store's lookups. A server's store indexes every stored session
 * (tens of thousands of them, kept after their sessions end so they can be resumed), so the
 * usual entry costs no object at all: a file named `<root>/<folder>/<time>_<uuid>.jsonl` is
 * kept as the UUID's 16 bytes, the time as epoch ms and the folder as a number into a shared
 * list, in one open-addressing table of typed arrays (28 bytes a slot, 40-75 per session, none of
 * them on the JS heap; a `Map` of strings took about 150). Anything else (another id or file
 * name shape, a file outside the layout, an id with several files) is kept as strings.
 */
export class SessionFileIndex {
  readonly #root: string;
  readonly #folders: string[] = [];
  readonly #folderNumbers = new Map<string, number>();
  /** Entries the packed table cannot hold: `<folder number>:<time>` or a whole path; an array when one id has several files. */
  readonly #other = new Map<string, string | string[]>();
  /** The packed table: four 32-bit words of the UUID per slot. */
  #keys = new Uint32Array(0);
  #times = new Float64Array(0);
  /** Folder number + 1 per slot; 0 marks an empty slot. */
  #slotFolders = new Uint32Array(0);
  #packed = 0;
  readonly #key = new Uint32Array(4);

  constructor(root: string) {
    this.#root = root;
  }

  /** Adds `file` (a path `<root>/<folder>/<time>_<id>.jsonl`, or any other path) under `id`. */
  add(id: string, file: string): void {
    // `#find` leaves the id's key in `#key` (a UUID id), where `#insert` takes it from.
    const slot = this.#find(id);
    const packable = this.#packable(id, file);
    if (slot >= 0) {
      const folder = this.#slotFolders[slot]! - 1;
      if (packable && packable.folder === folder && packable.ms === this.#times[slot]) return;
      // A second file for the id: both move to the string side.
      const first = `${folder}:${formatFileTime(this.#times[slot]!)}`;
      this.#remove(slot);
      this.#other.set(ownCopy(id), first);
    } else if (packable && !this.#other.has(id)) {
      this.#insert(packable.folder, packable.ms);
      return;
    }
    const encoded = this.#encode(id, file);
    const present = this.#other.get(id);
    if (present === undefined) {
      this.#other.set(ownCopy(id), encoded);
      return;
    }
    const list = typeof present === 'string' ? [present] : present;
    if (!list.includes(encoded)) list.push(encoded);
    if (typeof present === 'string' && list.length > 1) this.#other.set(id, list);
  }

  files(id: string): string[] {
    const slot = this.#find(id);
    if (slot >= 0) return [this.#path(this.#slotFolders[slot]! - 1, formatFileTime(this.#times[slot]!), id)];
    const present = this.#other.get(id);
    if (present === undefined) return [];
    return typeof present === 'string' ? [this.#decode(id, present)] : present.map((entry) => this.#decode(id, entry));
  }

  delete(id: string): void {
    const slot = this.#find(id);
    if (slot >= 0) this.#remove(slot);
    this.#other.delete(id);
  }

  get size(): number {
    return this.#packed + this.#other.size;
  }

  /** The folder number and time of a file the packed table can hold. */
  #packable(id: string, file: string): { folder: number; ms: number } | undefined {
    if (!UUID.test(id)) return undefined;
    const layout = this.#layout(id, file);
    const ms = layout === undefined ? undefined : fileTimeMs(layout.time);
    return layout === undefined || ms === undefined ? undefined : { folder: this.#folderNumber(layout.folderName), ms };
  }

  /** The project folder and time prefix of `<root>/<folder>/<time>_<id>.jsonl`, or undefined for a file elsewhere. */
  #layout(id: string, file: string): { folderName: string; time: string } | undefined {
    const name = basename(file);
    const folder = dirname(file);
    const suffix = `_${id}${JSONL}`;
    if (dirname(folder) !== this.#root || !name.endsWith(suffix)) return undefined;
    return { folderName: basename(folder), time: name.slice(0, name.length - suffix.length) };
  }

  #folderNumber(folderName: string): number {
    let number = this.#folderNumbers.get(folderName);
    if (number === undefined) {
      number = this.#folders.length;
      this.#folders.push(ownCopy(folderName));
      this.#folderNumbers.set(this.#folders[number]!, number);
    }
    return number;
  }

  /** Writes the UUID's words into `#key`; false for an id that is not a lowercase UUID. */
  #setKey(id: string): boolean {
    if (id.length !== 36 || !UUID.test(id)) return false;
    const key = this.#key;
    key[0] = Number.parseInt(id.slice(0, 8), 16);
    key[1] = Number.parseInt(id.slice(9, 13) + id.slice(14, 18), 16);
    key[2] = Number.parseInt(id.slice(19, 23) + id.slice(24, 28), 16);
    key[3] = Number.parseInt(id.slice(28, 36), 16);
    return true;
  }

  #home(capacity: number): number {
    const key = this.#key;
    let hash = Math.imul(key[0]! ^ Math.imul(key[1]!, 0x9e3779b1), 0x85ebca6b);
    hash ^= Math.imul(key[2]! ^ Math.imul(key[3]!, 0xc2b2ae35), 0x27d4eb2f);
    hash ^= hash >>> 15;
    return (hash >>> 0) & (capacity - 1);
  }

  /** The slot holding `id`, or -1 (linear probing: the run from its home slot to an empty one). Sets `#key` for a UUID id. */
  #find(id: string): number {
    const capacity = this.#times.length;
    if (!this.#setKey(id) || this.#packed === 0) return -1;
    const key = this.#key;
    const keys = this.#keys;
    for (let slot = this.#home(capacity); this.#slotFolders[slot] !== 0; slot = (slot + 1) & (capacity - 1)) {
      const at = slot * 4;
      if (keys[at] === key[0] && keys[at + 1] === key[1] && keys[at + 2] === key[2] && keys[at + 3] === key[3]) return slot;
    }
    return -1;
  }

  /** Stores `#key` (not present yet) with its file's folder and time. */
  #insert(folder: number, ms: number): void {
    if ((this.#packed + 1) * 4 > this.#times.length * 3) this.#grow();
    const capacity = this.#times.length;
    let slot = this.#home(capacity);
    while (this.#slotFolders[slot] !== 0) slot = (slot + 1) & (capacity - 1);
    this.#keys.set(this.#key, slot * 4);
    this.#times[slot] = ms;
    this.#slotFolders[slot] = folder + 1;
    this.#packed += 1;
  }

  #grow(): void {
    const keys = this.#keys;
    const times = this.#times;
    const folders = this.#slotFolders;
    const saved = Uint32Array.from(this.#key);
    const capacity = Math.max(INITIAL_SLOTS, times.length * 2);
    this.#keys = new Uint32Array(capacity * 4);
    this.#times = new Float64Array(capacity);
    this.#slotFolders = new Uint32Array(capacity);
    this.#packed = 0;
    for (let slot = 0; slot < times.length; slot += 1) {
      if (folders[slot] === 0) continue;
      this.#key.set(keys.subarray(slot * 4, slot * 4 + 4));
      this.#insert(folders[slot]! - 1, times[slot]!);
    }
    this.#key.set(saved);
  }

  /** Empties `slot`, moving later entries of its probe run back so every lookup still reaches them. */
  #remove(slot: number): void {
    const capacity = this.#times.length;
    const keys = this.#keys;
    const saved = Uint32Array.from(this.#key);
    let hole = slot;
    for (let next = (slot + 1) & (capacity - 1); this.#slotFolders[next] !== 0; next = (next + 1) & (capacity - 1)) {
      this.#key.set(keys.subarray(next * 4, next * 4 + 4));
      const home = this.#home(capacity);
      // The entry at `next` may fill the hole when its home is not cyclically within (hole, next].
      const reachable = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (reachable) continue;
      keys.copyWithin(hole * 4, next * 4, next * 4 + 4);
      this.#times[hole] = this.#times[next]!;
      this.#slotFolders[hole] = this.#slotFolders[next]!;
      hole = next;
    }
    this.#slotFolders[hole] = 0;
    this.#packed -= 1;
    this.#key.set(saved);
  }

  #encode(id: string, file: string): string {
    const layout = this.#layout(id, file);
    return ownCopy(layout ? `${this.#folderNumber(layout.folderName)}:${layout.time}` : file);
  }

  #decode(id: string, entry: string): string {
    const folder = /^(\d+):/.exec(entry);
    if (!folder) return entry;
    return this.#path(Number(folder[1]), entry.slice(folder[0].length), id);
  }

  #path(folder: number, time: string, id: string): string {
    return join(this.#root, this.#folders[folder]!, `${time}_${id}${JSONL}`);
  }
}
