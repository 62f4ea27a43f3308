import type { SessionTreeEntry, SessionTreeNode } from '@tessera/contracts';
import type { SessionEntry } from './entries.js';
import { isLeafMarker } from './leaf-marker.js';
import { HISTORY_EVENT_TYPE } from './record-mapping.js';
import type { SessionTreeNode as StoredTreeNode } from './session-tree.js';

/** Longest preview, in characters (one line of a `/tree` view). */
export const PREVIEW_LENGTH = 80;

/**
 * The store's tree as the `SessionTree` contract shows it. Leaf markers without children
 * are left out: they only say where a session resumes (see leaf-marker.ts).
 */
export function treeNodes(nodes: readonly StoredTreeNode[]): SessionTreeNode[] {
  const shown: SessionTreeNode[] = [];
  for (const node of nodes) {
    if (isLeafMarker(node.entry) && node.children.length === 0) continue;
    shown.push({ entry: treeEntry(node.entry, node.label), children: treeNodes(node.children) });
  }
  return shown;
}

export function treeEntry(entry: SessionEntry, label: string | undefined): SessionTreeEntry {
  const view: SessionTreeEntry = { id: entry.id, parentId: entry.parentId, type: entry.type, timestamp: entry.timestamp };
  if (entry.type === 'message') view.role = entry.message.role;
  const text = previewText(entry);
  if (text !== undefined) {
    const line = text.replace(/\s+/g, ' ').trim();
    if (line !== '') view.preview = line.length > PREVIEW_LENGTH ? `${line.slice(0, PREVIEW_LENGTH - 1)}…` : line;
  }
  if (label !== undefined) view.label = label;
  return view;
}

function previewText(entry: SessionEntry): string | undefined {
  switch (entry.type) {
    case 'message':
      return contentText(entry.message.content);
    case 'custom_message':
      return contentText(entry.content);
    case 'compaction':
    case 'branch_summary':
      return entry.summary;
    case 'label':
      return entry.label;
    case 'model_change':
      return entry.model ?? (entry.provider === undefined ? undefined : `${entry.provider}/${entry.modelId ?? ''}`);
    case 'thinking_level_change':
      return entry.thinkingLevel;
    case 'mode_change':
      return entry.mode;
    case 'custom':
      // A history event shows its own type (`tool-summary`, …); other custom entries their customType.
      return entry.customType === HISTORY_EVENT_TYPE ? String((entry.data as { type?: unknown } | undefined)?.type ?? entry.customType) : entry.customType;
    default:
      return undefined;
  }
}

function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const block of content as Array<Record<string, unknown>>) {
    if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block?.type === 'toolCall' && typeof block.name === 'string') parts.push(`[${block.name}]`);
  }
  return parts.length > 0 ? parts.join(' ') : undefined;
}
