import { join } from 'node:path';
import { isSessionHeader, type SessionHeader } from './entries.js';
import type { SessionStorage } from './session-storage.js';

/** Bytes read from the start of each file for listings (header + first messages). */
export const LIST_PREFIX_BYTES = 4096;
/** Bytes read from the end of each file for listings (latest activity, latest name). */
export const LIST_TAIL_BYTES = 32 * 1024;

/** Lightweight metadata of a session file, from a bounded prefix and tail (never the whole file). */
export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  /** Header `title`, or the name of the last pi `session_info` entry seen in the tail. */
  name?: string;
  parentSession?: string;
  created: Date;
  /** Time of the newest user/assistant message seen in the tail; else the header time; else the file mtime. */
  modified: Date;
  /** First user text seen in the prefix, or `"(no messages)"`. */
  firstMessage: string;
  size: number;
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function messageText(message: Record<string, unknown>): string | undefined {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((block) => block?.type === 'text' && typeof block.text === 'string').map((block) => block.text as string);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

function entryTime(entry: Record<string, unknown>, message: Record<string, unknown>): number | undefined {
  if (typeof message.timestamp === 'number') return message.timestamp;
  const parsed = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : Number.NaN;
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** Reads just the header line (first 4 KiB, more only for an unusually long header). */
export async function readHeader(storage: SessionStorage, path: string): Promise<{ header: SessionHeader; prefix: string } | undefined> {
  let prefix = await storage.readTextPrefix(path, LIST_PREFIX_BYTES);
  if (!prefix.includes('\n') && prefix.length >= LIST_PREFIX_BYTES) prefix = await storage.readTextPrefix(path, 256 * 1024);
  const newline = prefix.indexOf('\n');
  const header = parseLine(newline === -1 ? prefix : prefix.slice(0, newline));
  return header && isSessionHeader(header) ? { header, prefix } : undefined;
}

export async function readSessionInfo(storage: SessionStorage, path: string): Promise<SessionInfo | undefined> {
  const stat = storage.statSync(path);
  if (!stat?.isFile) return undefined;
  const head = await readHeader(storage, path);
  if (!head) return undefined;
  const { header, prefix } = head;

  let firstMessage: string | undefined;
  const prefixLines = prefix.split('\n');
  for (let index = 1; index < prefixLines.length - 1 && firstMessage === undefined; index += 1) {
    const entry = parseLine(prefixLines[index] as string);
    const message = entry?.type === 'message' ? (entry.message as Record<string, unknown> | undefined) : undefined;
    if (message?.role === 'user') firstMessage = messageText(message);
  }

  const tail = stat.size <= prefix.length ? prefix : await storage.readTextTail(path, LIST_TAIL_BYTES);
  const tailLines = tail.split('\n');
  // Without the whole file, the first tail line may be a fragment.
  const firstComplete = stat.size <= LIST_TAIL_BYTES ? 0 : 1;
  let modified: number | undefined;
  let sessionInfoName: string | undefined;
  for (let index = tailLines.length - 1; index >= firstComplete; index -= 1) {
    const line = tailLines[index] as string;
    if (line.trim() === '' || (modified !== undefined && sessionInfoName !== undefined)) continue;
    const entry = parseLine(line);
    if (!entry) continue;
    if (entry.type === 'session_info' && sessionInfoName === undefined && typeof entry.name === 'string') sessionInfoName = entry.name;
    const message = entry.type === 'message' ? (entry.message as Record<string, unknown> | undefined) : undefined;
    if (modified === undefined && message && (message.role === 'user' || message.role === 'assistant')) modified = entryTime(entry, message);
  }

  const created = Date.parse(header.timestamp);
  const info: SessionInfo = {
    path,
    id: header.id,
    cwd: header.cwd,
    created: new Date(Number.isNaN(created) ? stat.mtimeMs : created),
    modified: new Date(modified ?? (Number.isNaN(created) ? stat.mtimeMs : created)),
    firstMessage: firstMessage ?? '(no messages)',
    size: stat.size,
  };
  const name = header.title ?? sessionInfoName;
  if (name !== undefined) info.name = name;
  if (header.parentSession !== undefined) info.parentSession = header.parentSession;
  return info;
}

/** Every readable session in one directory, newest activity first. */
export async function listSessionsInDir(storage: SessionStorage, dir: string): Promise<SessionInfo[]> {
  const infos: SessionInfo[] = [];
  for (const name of storage.listFilesSync(dir, '*.jsonl')) {
    const info = await readSessionInfo(storage, join(dir, name));
    if (info) infos.push(info);
  }
  return infos.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/** `*.jsonl` paths of a directory, newest mtime first. */
export function filesByMtime(storage: SessionStorage, dir: string): string[] {
  return storage
    .listFilesSync(dir, '*.jsonl')
    .map((name) => {
      const path = join(dir, name);
      return { path, mtime: storage.statSync(path)?.mtimeMs ?? 0 };
    })
    .sort((a, b) => b.mtime - a.mtime)
    .map((file) => file.path);
}
