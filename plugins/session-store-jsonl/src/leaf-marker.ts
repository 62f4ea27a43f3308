import type { SessionEntry } from './entries.js';
import type { SessionManager } from './session-manager.js';

/**
 * `custom` entry that records a moved leaf. The pi format has no leaf field: a reader takes
 * the last entry of the file as the leaf. So `SessionTree.branch` appends this entry as a
 * child of the branch point; a reader that knows it (`restoreLeaf`) steps back to its
 * parent, and pi or oh-my-pi resume on the same branch, just one empty entry further.
 */
export const LEAF_MARKER_TYPE = 'tessera.leaf';

export function isLeafMarker(entry: SessionEntry | undefined): boolean {
  return entry?.type === 'custom' && entry.customType === LEAF_MARKER_TYPE;
}

/**
 * Moves the leaf to `entryId` so that a reload lands there too. Writes nothing when the file
 * already ends there: at `entryId` itself, or at a marker under it.
 */
export function persistLeaf(manager: SessionManager, entryId: string): void {
  manager.branch(entryId);
  const entries = manager.getEntries();
  const last = entries[entries.length - 1];
  if (last?.id === entryId || (isLeafMarker(last) && last?.parentId === entryId)) return;
  manager.appendCustomEntry(LEAF_MARKER_TYPE);
  // The marker is only a signpost: new entries attach to the branch point, not to it.
  manager.branch(entryId);
}

/** After a load: a file that ends in a marker resumes at the marker's parent. */
export function restoreLeaf(manager: SessionManager): void {
  const leaf = manager.getLeafEntry();
  if (!isLeafMarker(leaf) || leaf?.parentId == null || manager.getEntry(leaf.parentId) === undefined) return;
  manager.branch(leaf.parentId);
}
