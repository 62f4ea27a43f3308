import type { SessionEntry } from './entries.js';
import type { JsonlProblem } from './jsonl.js';
import { isLeafMarker } from './leaf-marker.js';

/** An entry whose parent was lost with a damaged line, and the surviving entry it now hangs from. */
export interface Reattachment {
  entryId: string;
  /** 1-based line of the entry. */
  line: number;
  /** The damaged line its parent was on (by the id the line still shows, else the nearest damaged line before the entry). */
  damagedLine: number;
  /** The entry it now continues from; null when nothing survives before the damage (it starts a root). */
  parentId: string | null;
  parentLine?: number;
}

/** A warning for the store's `onWarning` channel (`TESSERA_SESSION_WARNING`). */
export interface SessionWarning {
  message: string;
  details: { file: string; line: number };
}

/** What a lenient read of a session file says about its lines (`readSessionFile`'s `ok` result). */
export interface LineReport {
  /** 1-based line of each file entry, header first: the entry at index `i` was read from `lines[i + 1]`. */
  lines: readonly number[];
  problems: readonly JsonlProblem[];
  /** The last problem is a torn last line. */
  tornTail: boolean;
}

/**
 * Reconnects the entries whose parent is missing because the parent's line was damaged (and
 * skipped), so one bad line does not cut the history before it off the branch. Each such
 * entry is attached to the nearest earlier surviving entry on its path: the damaged entry's
 * own parent when the line still shows its `id` and `parentId`, else the entry on the last
 * surviving line before the damage (a leaf marker there stands for its parent), else nothing
 * (a new root). Only `parentId` in memory changes; the file is never touched. Entries whose
 * parent is missing with no damaged line before them stay roots, as before.
 */
export function reattachOrphans(entries: SessionEntry[], report: LineReport): Reattachment[] {
  const { lines, problems } = report;
  if (problems.length === 0) return [];
  const lineOf = (index: number): number => lines[index + 1] ?? 0;
  const indexById = new Map<string, number>();
  for (let index = 0; index < entries.length; index += 1) {
    const { id } = entries[index] as SessionEntry;
    if (typeof id === 'string') indexById.set(id, index);
  }
  const damagedById = new Map<string, JsonlProblem>();
  for (const problem of problems) if (problem.link) damagedById.set(problem.link.id, problem);
  // Damaged lines whose entry is unknown: any of them may have held a missing parent.
  const unknown = problems.filter((problem) => problem.link === undefined);

  /** The damaged line that held `parentId`, the parent of the entry on `line`. */
  const damagedLineOf = (parentId: string, line: number): JsonlProblem | undefined => {
    const known = damagedById.get(parentId);
    if (known !== undefined && known.line < line) return known;
    return unknown[lastBefore(unknown.length, (index) => (unknown[index] as JsonlProblem).line, line)];
  };

  /** Index of the surviving entry the entry lost with `damaged` continues from; -1 for none (a root). */
  const survivingParent = (damaged: JsonlProblem): number => {
    let current = damaged;
    // Up through damaged lines that still show their links, as long as they lead to earlier lines.
    for (let steps = 0; steps < problems.length && current.link !== undefined; steps += 1) {
      const { parentId } = current.link;
      if (parentId === null) return -1;
      const index = indexById.get(parentId);
      if (index !== undefined && lineOf(index) < current.line) return index;
      const next = damagedById.get(parentId);
      if (next === undefined || next.line >= current.line) break;
      current = next;
    }
    let index = lastBefore(entries.length, lineOf, current.line);
    while (index >= 0 && typeof (entries[index] as SessionEntry).id !== 'string') index -= 1;
    const candidate = entries[index];
    if (candidate !== undefined && isLeafMarker(candidate) && candidate.parentId !== null) {
      // A marker is a dead end; what followed the damage continued from the entry it marks.
      const marked = indexById.get(candidate.parentId);
      if (marked !== undefined && marked < index) return marked;
    }
    return index;
  };

  const reattached: Reattachment[] = [];
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index] as SessionEntry;
    const { parentId } = entry;
    if (typeof entry.id !== 'string' || typeof parentId !== 'string' || indexById.has(parentId)) continue;
    const line = lineOf(index);
    const damaged = damagedLineOf(parentId, line);
    if (damaged === undefined) continue;
    const parentIndex = survivingParent(damaged);
    const parent = parentIndex >= 0 ? (entries[parentIndex] as SessionEntry) : undefined;
    (entry as { parentId: string | null }).parentId = parent?.id ?? null;
    reattached.push({ entryId: entry.id, line, damagedLine: damaged.line, parentId: parent?.id ?? null, ...(parent ? { parentLine: lineOf(parentIndex) } : {}) });
  }
  return reattached;
}

/**
 * `reattachOrphans`, then one warning per skipped line of `file`: the line, why it was
 * skipped, and which entries that hung from it continue from where.
 */
export function recoverDamagedLines(file: string, entries: SessionEntry[], report: LineReport): SessionWarning[] {
  const reattached = reattachOrphans(entries, report);
  const { problems, tornTail } = report;
  return problems.map((problem, index) => {
    const torn = tornTail && index === problems.length - 1;
    let message = `${file}:${problem.line}: ${problem.reason}${torn ? '' : '; the line was skipped (the file is left as it is)'}`;
    for (const moved of reattached) {
      if (moved.damagedLine !== problem.line) continue;
      const where = moved.parentId === null ? 'now starts a new root' : `now continues from entry ${moved.parentId} (line ${moved.parentLine})`;
      message += `. Entry ${moved.entryId} (line ${moved.line}) lost its parent with this line and ${where}`;
    }
    return { message, details: { file, line: problem.line } };
  });
}

/** The last index in `[0, length)` whose ascending `lineAt` is below `line`; -1 when none is. */
function lastBefore(length: number, lineAt: (index: number) => number, line: number): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (lineAt(middle) < line) low = middle + 1;
    else high = middle;
  }
  return low - 1;
}
