import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TesseraError, type Clock } from '@tessera/contracts';
import { matchFieldLine } from './task-file.js';

export interface UpdateTaskFileStatusOptions {
  /** Appended as `- YYYY-MM-DD: <message>` under the file's `## Progress` section (made if absent). */
  progressMessage?: string;
  /** Dates the progress entry (UTC). Default: the system clock. */
  clock?: Pick<Clock, 'now'>;
}

export interface UpdateTaskFileStatusResult {
  path: string;
  status: string;
  /** The status written before, as it was written; undefined when the line was inserted. */
  previousStatus?: string;
  /** The progress line appended, when there was a message. */
  progressEntry?: string;
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

/**
 * Sets a task file's status and optionally records progress. The first status field keeps
 * its author's style (`- **Status**:` or `- Status:`) and only its value changes; a file
 * without one gets `- **Status**: <status>` above its first other metadata field, or under
 * its title. The file is replaced through a temporary file and a rename, so a reader never
 * sees half of it.
 */
export function updateTaskFileStatus(path: string, status: string, options: UpdateTaskFileStatusOptions = {}): UpdateTaskFileStatusResult {
  const value = singleLine(status, 'status', path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new TesseraError(`Cannot read task file ${path}; check the path (it is resolved against the process's working directory).`, {
      code: 'task_file_unreadable',
      category: 'io',
      recoverable: false,
      cause: error,
      details: { file: path },
    });
  }
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  const result: UpdateTaskFileStatusResult = { path, status: value };

  const statusIndex = lines.findIndex((line) => matchFieldLine(line)?.field === 'status');
  if (statusIndex >= 0) {
    const field = matchFieldLine(lines[statusIndex]!)!;
    result.previousStatus = field.value;
    lines[statusIndex] = `${field.prefix}${value}`;
  } else {
    lines.splice(statusInsertIndex(lines), 0, `- **Status**: ${value}`);
  }

  if (options.progressMessage !== undefined) {
    const message = singleLine(options.progressMessage, 'progressMessage', path);
    const entry = `- ${isoDate((options.clock ?? { now: () => Date.now() }).now())}: ${message}`;
    appendProgress(lines, entry);
    result.progressEntry = entry;
  }

  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(temporary, lines.join(newline), 'utf8');
  renameSync(temporary, path);
  return result;
}

/** Above the first metadata field; else right under the first heading (after a blank line); else first. */
function statusInsertIndex(lines: string[]): number {
  const field = lines.findIndex((line) => matchFieldLine(line) !== undefined);
  if (field >= 0) return field;
  const heading = lines.findIndex((line) => HEADING.test(line));
  if (heading < 0) return 0;
  if (lines[heading + 1]?.trim() === '') return heading + 2;
  lines.splice(heading + 1, 0, '');
  return heading + 2;
}

/** At the end of a `Progress` section (any level, case-insensitive), or in a new `## Progress` at the end. */
function appendProgress(lines: string[], entry: string): void {
  const start = lines.findIndex((line) => HEADING.exec(line)?.[2]?.toLowerCase() === 'progress');
  if (start < 0) {
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
    lines.push('', '## Progress', '', entry, '');
    return;
  }
  const level = HEADING.exec(lines[start]!)![1]!.length;
  let end = lines.length;
  for (let index = start + 1; index < lines.length; index++) {
    const heading = HEADING.exec(lines[index]!);
    if (heading && heading[1]!.length <= level) {
      end = index;
      break;
    }
  }
  let last = end - 1;
  while (last > start && lines[last]!.trim() === '') last--;
  const insertAt = last + 1;
  // Directly under the heading, keep one blank line between heading and list.
  lines.splice(insertAt, 0, ...(last === start ? ['', entry] : [entry]));
}

function singleLine(value: string, field: string, path: string): string {
  const trimmed = value.trim();
  if (trimmed === '' || /[\r\n]/.test(trimmed)) {
    throw new TesseraError(`${field} for ${path} must be one non-empty line.`, {
      code: 'invalid_task_update',
      category: 'validation',
      recoverable: false,
      details: { file: path, field },
    });
  }
  return trimmed;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
