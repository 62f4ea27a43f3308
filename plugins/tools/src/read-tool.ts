import type { ImageBlock, TextBlock, Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { extname } from 'node:path';
import { z } from 'zod';
import { filesFor, stateFor, type FileToolOptions } from './common-options.js';
import { renderNotebook } from './notebook.js';
import { errorText, fail, succeed } from './result.js';
import { refuseNonRegular } from './freshness.js';
import { decodeText, hashBytes, utf16ByteOrder, type DecodedText } from './workspace-files.js';

export interface ReadToolOptions extends FileToolOptions {
  /** Lines returned when `limit` is not given. Default 2,000. */
  defaultLimit?: number;
  /** Longer lines are cut to this many characters. Default 2,000. */
  maxLineLength?: number;
  /** Larger text files are refused (use offset/limit on smaller ones, or Grep). Default 50 MB. */
  maxFileBytes?: number;
  /** Larger images are refused. Default 5 MB (the usual provider limit). */
  maxImageBytes?: number;
  /**
   * Characters of text returned at most (declared as the tool's `maxResultChars`). Line count
   * alone does not bound a read: 2,000 long lines are megabytes. Text stops at the last whole
   * line that fits, with a note saying where to go on; a notebook's rendered text is cut the
   * same way (images are not counted). Default 100,000.
   */
  maxOutputChars?: number;
}

export interface ReadToolData {
  filePath: string;
  type: 'text' | 'image' | 'notebook';
  /** Cells in a notebook read as a notebook. */
  numCells?: number;
  /** First line shown (1-based) and how many lines were shown, for text. */
  startLine?: number;
  numLines?: number;
  totalLines?: number;
}

export const readInputSchema = z.object({
  file_path: z.string().describe('The absolute path to the file to read'),
  offset: z.number().int().min(1).optional().describe('The line number to start reading from (1-based). Only provide if the file is too large to read at once'),
  limit: z.number().int().min(1).optional().describe('The number of lines to read. Only provide if the file is too large to read at once'),
});

export type ReadInput = z.infer<typeof readInputSchema>;

const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** Extensions that are binary whatever their first bytes say. */
const BINARY_EXTENSIONS = new Set([
  '.zip', '.gz', '.tgz', '.bz2', '.xz', '.7z', '.rar', '.tar', '.jar', '.exe', '.dll', '.so', '.dylib', '.o', '.a',
  '.class', '.pyc', '.wasm', '.bin', '.dat', '.db', '.sqlite', '.pdf', '.ico', '.bmp', '.tiff', '.mp3', '.mp4',
  '.mov', '.avi', '.wav', '.flac', '.ogg', '.woff', '.woff2', '.ttf', '.otf', '.eot', '.psd',
]);

/** A NUL byte in the first 8 KB marks a file as binary (the heuristic git and ripgrep use). */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, 8192);
  for (let index = 0; index < end; index += 1) if (bytes[index] === 0) return true;
  return false;
}

/** Tells the model when the shown text is not plain UTF-8, since Edit will refuse such a file. */
function encodingNotice(encoding: DecodedText['encoding']): string {
  if (encoding === 'utf-8') return '';
  const what =
    encoding === 'unknown'
      ? 'This file is not valid UTF-8; bytes that are not UTF-8 are shown as the replacement character \uFFFD.'
      : `This file is ${encoding.toUpperCase()} encoded (with a byte order mark); it is shown decoded.`;
  return `<system-reminder>${what} Edit cannot change it; use Write with the full new content (saved as UTF-8) or Bash.</system-reminder>\n`;
}

/** {@link looksBinary}, except that UTF-16 with a BOM (full of NUL bytes) is judged after decoding. */
function looksBinaryText(bytes: Uint8Array): boolean {
  if (!utf16ByteOrder(bytes)) return looksBinary(bytes);
  return decodeText(bytes.subarray(0, 8194)).text.includes('\0');
}

/** `cat -n` layout for one line: the number right-aligned in six columns, then a tab. */
function numberLine(line: string, number: number, maxLineLength: number): string {
  const shown = line.length > maxLineLength ? `${line.slice(0, maxLineLength)}… [line truncated]` : line;
  return `${String(number).padStart(6)}\t${shown}`;
}

/** Room kept for the closing note (`[Showing lines …]`), so the whole result stays within budget. */
const NOTE_ROOM = 160;
/** Room for a line's number, tab and truncation marker when a budget shortens lines. */
const LINE_FRAME = 40;

/**
 * Numbered lines (`cat -n` layout) within `budget` characters: as many whole lines as fit,
 * and how many that is. At least one line is shown, so a read always moves on; under a budget
 * smaller than a long line, lines are cut shorter to fit.
 */
export function numberLinesWithin(
  lines: readonly string[],
  firstLine: number,
  maxLineLength: number,
  budget: number,
): { text: string; count: number } {
  const lineCap = Math.max(1, Math.min(maxLineLength, budget - LINE_FRAME));
  const numbered: string[] = [];
  let length = 0;
  for (let index = 0; index < lines.length; index += 1) {
    const line = numberLine(lines[index]!, firstLine + index, lineCap);
    length += line.length + (index > 0 ? 1 : 0);
    if (length > budget && index > 0) break;
    numbered.push(line);
  }
  return { text: numbered.join('\n'), count: numbered.length };
}

/**
 * A rendered notebook cut to `budget` characters of text: blocks are kept in order until the
 * text would overflow, where the overflowing block stops at its last whole line and nothing
 * after it is kept. Image blocks before the cut stay (they are not text). `cut` tells whether
 * anything was dropped, and `lastCell` the index of the last cell shown (in part).
 */
export function limitNotebookText(
  blocks: ReadonlyArray<TextBlock | ImageBlock>,
  budget: number,
): { blocks: Array<TextBlock | ImageBlock>; cut: boolean; lastCell: number | undefined } {
  const kept: Array<TextBlock | ImageBlock> = [];
  let remaining = budget;
  let lastCell: number | undefined;
  const noteCells = (text: string) => {
    for (const match of text.matchAll(/<cell index="(\d+)"/g)) lastCell = Number(match[1]);
  };
  for (const block of blocks) {
    if (block.type === 'image') {
      kept.push(block);
      continue;
    }
    if (block.text.length <= remaining) {
      kept.push(block);
      noteCells(block.text);
      remaining -= block.text.length + 1;
      continue;
    }
    // At the last whole line that fits; mid-line only when not even one line does (a minified cell).
    const room = Math.max(0, remaining);
    const end = block.text.lastIndexOf('\n', room);
    const part = block.text.slice(0, end > 0 ? end : room);
    if (part !== '') {
      kept.push({ type: 'text', text: part });
      noteCells(part);
    }
    return { blocks: kept, cut: true, lastCell };
  }
  return { blocks: kept, cut: false, lastCell };
}

/**
 * Read: numbered lines of a text file (`offset` / `limit`; UTF-8, or UTF-16 with a BOM),
 * images as image blocks, binary files and FIFOs, sockets or devices refused. Every successful read is recorded for the session so Write and Edit can
 * refuse to overwrite a file the model has not seen, or that changed since it looked.
 */
export function readTool(options: ReadToolOptions = {}): Tool<ReadInput, ReadToolData> {
  const files = filesFor(options);
  const stateOf = stateFor(options);
  const defaultLimit = options.defaultLimit ?? 2_000;
  const maxLineLength = options.maxLineLength ?? 2_000;
  const maxFileBytes = options.maxFileBytes ?? 50 * 1024 * 1024;
  const maxImageBytes = options.maxImageBytes ?? 5 * 1024 * 1024;
  const maxOutputChars = options.maxOutputChars ?? 100_000;

  return defineTool<ReadInput, ReadToolData>({
    name: 'Read',
    description:
      'Reads a file from the local filesystem. file_path must be absolute. By default reads up to ' +
      `${defaultLimit} lines from the start; use offset and limit for long files. Output is numbered like cat -n. ` +
      'Images (PNG, JPEG, GIF, WebP) are returned as images; Jupyter notebooks (.ipynb) cell by cell with their outputs. A file must be read before it is edited or overwritten.',
    inputSchema: readInputSchema,
    maxResultChars: maxOutputChars,
    async execute(input, context) {
      const resolved = await files.resolve(input.file_path, context);
      if (!resolved.ok) return fail(resolved.message, resolved.code);
      const path = resolved.path;
      try {
        const found = await files.stat(path);
        if (!found) return fail(`File does not exist: ${input.file_path}. Check the path, or use Glob to find the file.`, 'not_found');
        if (found.isDirectory) return fail(`${input.file_path} is a directory, not a file. Use Glob or Bash (ls) to list it.`, 'is_directory');
        const special = refuseNonRegular(found, input.file_path, 'Read');
        if (special) return special;
        const extension = extname(path).toLowerCase();
        const mediaType = IMAGE_TYPES[extension];
        if (mediaType) {
          if (found.size > maxImageBytes) {
            return fail(`Image ${input.file_path} is ${found.size} bytes; the limit is ${maxImageBytes}.`, 'too_large');
          }
          const bytes = await files.read(path, found.size);
          stateOf().recordRead(context.sessionId, path, { mtimeMs: found.mtimeMs, size: bytes.length, hash: hashBytes(bytes) });
          const blocks: Array<TextBlock | ImageBlock> = [
            { type: 'text', text: `Image ${input.file_path} (${mediaType}, ${bytes.length} bytes):` },
            { type: 'image', mediaType, data: bytes.toString('base64') },
          ];
          return succeed(blocks, { filePath: path, type: 'image' });
        }
        if (found.size > maxFileBytes) {
          return fail(
            `${input.file_path} is ${found.size} bytes, over the ${maxFileBytes}-byte read limit. Use Grep to find the part you need, or Bash (head, tail, sed -n) to read a slice.`,
            'too_large',
          );
        }
        const bytes = await files.read(path, found.size);
        if (extension === '.pdf') {
          return fail(
            `${input.file_path} is a PDF; Read returns text, images and notebooks only. Extract the text with Bash, e.g. pdftotext -layout "${input.file_path}" -`,
            'binary_file',
          );
        }
        if (BINARY_EXTENSIONS.has(extension) || looksBinaryText(bytes)) {
          return fail(`${input.file_path} is a binary file and cannot be read as text. Use Bash with a suitable tool (file, xxd, unzip -l) to inspect it.`, 'binary_file');
        }
        stateOf().recordRead(context.sessionId, path, { mtimeMs: found.mtimeMs, size: bytes.length, hash: hashBytes(bytes) });
        if (bytes.length === 0) {
          return succeed('<system-reminder>Warning: the file exists but its contents are empty.</system-reminder>', {
            filePath: path,
            type: 'text',
            startLine: 1,
            numLines: 0,
            totalLines: 0,
          });
        }
        const decoded = decodeText(bytes);
        const text = decoded.text;
        let notice = encodingNotice(decoded.encoding);
        // A notebook is shown cell by cell; offset / limit ask for the raw JSON lines instead.
        if (extension === '.ipynb' && input.offset === undefined && input.limit === undefined) {
          const notebook = renderNotebook(text, maxImageBytes);
          if (notebook) {
            const header: TextBlock = {
              type: 'text',
              text: `Notebook ${input.file_path}: ${notebook.cells} cells${notebook.language ? `, ${notebook.language}` : ''}. (Pass offset/limit to read the raw JSON lines.)`,
            };
            const limited = limitNotebookText(notebook.blocks, maxOutputChars - header.text.length - NOTE_ROOM);
            const blocks = [header, ...limited.blocks];
            if (limited.cut) {
              const shown = limited.lastCell === undefined ? 'No cell fits' : `Showing cells 1-${limited.lastCell} of ${notebook.cells}`;
              blocks.push({
                type: 'text',
                text: `[${shown} (output limit; the last one may be cut). Use offset/limit to read the raw JSON lines, or Bash (jq) to print later cells.]`,
              });
            }
            return succeed(blocks, { filePath: path, type: 'notebook', numCells: notebook.cells });
          }
          notice += '<system-reminder>This .ipynb file is not valid notebook JSON; it is shown as text.</system-reminder>\n';
        }
        const lines = text.split(/\r?\n/);
        if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
        const start = input.offset ?? 1;
        const limit = input.limit ?? defaultLimit;
        if (start > lines.length) {
          return succeed(
            `<system-reminder>Warning: the file has only ${lines.length} lines, fewer than offset ${start}.</system-reminder>`,
            { filePath: path, type: 'text', startLine: start, numLines: 0, totalLines: lines.length },
          );
        }
        const wanted = lines.slice(start - 1, start - 1 + limit);
        const shown = numberLinesWithin(wanted, start, maxLineLength, maxOutputChars - notice.length - NOTE_ROOM);
        let output = notice + shown.text;
        const last = start - 1 + shown.count;
        if (last < lines.length) {
          const why = shown.count < wanted.length ? ' (output limit)' : '';
          output += `\n\n[Showing lines ${start}-${last} of ${lines.length}${why}. Use offset=${last + 1} to read more.]`;
        }
        return succeed(output, { filePath: path, type: 'text', startLine: start, numLines: shown.count, totalLines: lines.length });
      } catch (error) {
        return fail(`Could not read ${input.file_path}: ${errorText(error)}`, 'io_error');
      }
    },
  });
}
