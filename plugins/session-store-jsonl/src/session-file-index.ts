import { basename, dirname, join } from 'node:path';

const JSONL = '.jsonl';

/** A string that holds its own characters (a substring would keep the whole string it was cut from alive). */
function ownCopy(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf8').toString('utf8');
}

/**
 * Session files by id, for the store's lookups. A server's store indexes every stored session
 * (tens of thousands of them), so an entry is kept small: the folder as a number into a shared
 * list plus the file name's time prefix, from which `<root>/<folder>/<time>_<id>.jsonl` is
 * rebuilt. A file anywhere else is kept as its whole path.
 */
export class SessionFileIndex {
  readonly #root: string;
  readonly #folders: string[] = [];
  readonly #folderNumbers = new Map<string, number>();
  /** `<folder number>:<time>`, or a whole path; an array when one id has several files. */
  readonly #byId = new Map<string, string | string[]>();

  constructor(root: string) {
    this.#root = root;
  }

  /** Adds `file` (a path `<root>/<folder>/<time>_<id>.jsonl`, or any other path) under `id`. */
  add(id: string, file: string): void {
    const encoded = this.#encode(id, file);
    const present = this.#byId.get(id);
    if (present === undefined) {
      this.#byId.set(ownCopy(id), encoded);
      return;
    }
    const list = typeof present === 'string' ? [present] : present;
    if (!list.includes(encoded)) list.push(encoded);
    if (typeof present === 'string' && list.length > 1) this.#byId.set(id, list);
  }

  files(id: string): string[] {
    const present = this.#byId.get(id);
    if (present === undefined) return [];
    return typeof present === 'string' ? [this.#decode(id, present)] : present.map((entry) => this.#decode(id, entry));
  }

  delete(id: string): void {
    this.#byId.delete(id);
  }

  get size(): number {
    return this.#byId.size;
  }

  #encode(id: string, file: string): string {
    const name = basename(file);
    const folder = dirname(file);
    const suffix = `_${id}${JSONL}`;
    if (dirname(folder) !== this.#root || !name.endsWith(suffix)) return ownCopy(file);
    const folderName = basename(folder);
    let number = this.#folderNumbers.get(folderName);
    if (number === undefined) {
      number = this.#folders.length;
      this.#folders.push(ownCopy(folderName));
      this.#folderNumbers.set(this.#folders[number]!, number);
    }
    return ownCopy(`${number}:${name.slice(0, name.length - suffix.length)}`);
  }

  #decode(id: string, entry: string): string {
    const folder = /^(\d+):/.exec(entry);
    if (!folder) return entry;
    return join(this.#root, this.#folders[Number(folder[1])]!, `${entry.slice(folder[0].length)}_${id}${JSONL}`);
  }
}
