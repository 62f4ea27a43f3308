import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectFolderFor } from '@tessera/formats/project-folder';

/** The project memory index, relative to the project folder. Topic files next to it are never read here. */
export const MEMORY_INDEX_PATH = '.tessera/memory/MEMORY.md';

export interface ProjectMemoryCaps {
  /** Default 200. */
  maxLines: number;
  /** UTF-8 bytes. Default 25 KB (25,600). */
  maxBytes: number;
}

export interface ProjectMemory {
  path: string;
  content: string;
  /** The whole file's size in bytes. */
  bytes: number;
  truncated: boolean;
}

export const DEFAULT_MEMORY_CAPS: ProjectMemoryCaps = { maxLines: 200, maxBytes: 25 * 1024 };

/**
 * The start of `.tessera/memory/MEMORY.md`: the first `maxLines` lines, then cut to
 * `maxBytes` at a line end (or at a character boundary when one line alone is too long).
 * The file is looked for from `cwd` up to the repository root (the nearest one wins), so a
 * session started in a sub-folder reads the project's memory; the memory plugin writes there
 * too. Undefined when the file is absent, unreadable or blank.
 */
export function readProjectMemory(cwd: string, caps: ProjectMemoryCaps = DEFAULT_MEMORY_CAPS): ProjectMemory | undefined {
  const path = join(projectFolderFor(cwd, '.tessera/memory').root, MEMORY_INDEX_PATH);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  if (text.trim() === '') return undefined;
  const bytes = Buffer.byteLength(text);
  const lines = text.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
  let kept = lines.slice(0, caps.maxLines).join('\n');
  let truncated = lines.length > caps.maxLines;
  if (Buffer.byteLength(kept) > caps.maxBytes) {
    truncated = true;
    const cut = Buffer.from(kept).subarray(0, caps.maxBytes).toString('utf8').replace(/\uFFFD+$/, '');
    const lastNewline = cut.lastIndexOf('\n');
    kept = lastNewline > 0 ? cut.slice(0, lastNewline) : cut;
  }
  return { path, content: kept, bytes, truncated };
}
