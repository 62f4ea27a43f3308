import type { Tool, ToolResult } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';
import { filesFor, stateFor, type FileToolOptions } from './common-options.js';
import { structuredPatch, type DiffHunk } from './diff.js';
import { closestMatch, lineOf, matchEdit } from './edit-match.js';
import { checkFresh, checkWritable, recordWrite, refuseNonRegular } from './freshness.js';
import { withPathLock } from './path-lock.js';
import { errorText, fail, succeed } from './result.js';
import { decodeText, type TextEncoding } from './workspace-files.js';

export type EditToolOptions = FileToolOptions;

export interface EditToolData {
  filePath: string;
  oldString: string;
  newString: string;
  replaceAll: boolean;
  /** How many occurrences were replaced. */
  replacements: number;
  /** Line (1-based) where the first replacement starts in the new file. */
  startLine: number;
  structuredPatch: DiffHunk[];
}

export const editInputSchema = z.object({
  file_path: z.string().describe('The absolute path to the file to modify'),
  old_string: z.string().describe('The text to replace'),
  new_string: z.string().describe('The text to replace it with (must be different from old_string)'),
  replace_all: z.boolean().optional().describe('Replace all occurrences of old_string (default false)'),
});

export type EditInput = z.infer<typeof editInputSchema>;

function replaceAt(content: string, offsets: readonly number[], oldString: string, newString: string): string {
  let out = '';
  let from = 0;
  for (const offset of offsets) {
    out += content.slice(from, offset) + newString;
    from = offset + oldString.length;
  }
  return out + content.slice(from);
}

/** Edit writes its result as UTF-8, so it changes only files that are UTF-8 already. */
function refuseEncoding(encoding: TextEncoding, shownPath: string): ToolResult<never> | undefined {
  if (encoding === 'utf-8') return undefined;
  const what = encoding === 'unknown' ? 'is not valid UTF-8 (perhaps Latin-1 or another legacy encoding)' : `is ${encoding.toUpperCase()} encoded`;
  return fail(
    `${shownPath} ${what}; Edit only changes UTF-8 files, and rewriting this one would corrupt it. ` +
      'Use Write with the full new content (it is saved as UTF-8), or Bash (e.g. sed, iconv) to change it in its own encoding.',
    'unsupported_encoding',
  );
}

/**
 * Edit: exact string replacement in one file. The file must have been Read in this session
 * and be unchanged since; `old_string` must occur exactly once unless `replace_all`. An empty
 * `old_string` creates a file that does not exist yet (or fills an empty one). Files that are
 * not UTF-8, not regular files, or read-only are refused rather than rewritten.
 */
export function editTool(options: EditToolOptions = {}): Tool<EditInput, EditToolData> {
  const files = filesFor(options);
  const stateOf = stateFor(options);
  return defineTool<EditInput, EditToolData>({
    name: 'Edit',
    description:
      'Performs an exact string replacement in a file. file_path must be absolute and the file must have been read with Read first. ' +
      'old_string must match the file exactly (including indentation) and be unique unless replace_all is true.',
    inputSchema: editInputSchema,
    async execute(input, context) {
      const { old_string: oldInput, new_string: newInput } = input;
      const replaceAll = input.replace_all ?? false;
      if (oldInput === newInput) {
        return fail('No changes to make: old_string and new_string are exactly the same.', 'no_change');
      }
      const resolved = await files.resolve(input.file_path, context);
      if (!resolved.ok) return fail(resolved.message, resolved.code);
      const path = resolved.path;
      // Held from the freshness check to the read record, so a concurrent Write or Edit of the same file waits and then sees this one's change.
      return withPathLock(path, async () => {
        try {
          const found = await files.stat(path);
          if (found?.isDirectory) return fail(`${input.file_path} is a directory; Edit needs a file path.`, 'is_directory');
          let content = '';
          if (!found) {
            if (oldInput !== '') {
              return fail(`File does not exist: ${input.file_path}. Use an empty old_string to create it, or Write.`, 'not_found');
            }
          } else {
            const refused = refuseNonRegular(found, input.file_path, 'Edit') ?? (await checkWritable(files, path, input.file_path, 'Edit'));
            if (refused) return refused;
            const fresh = await checkFresh(files, stateOf(), context.sessionId, path, input.file_path, found);
            if (!fresh.ok) return fresh.result;
            const decoded = decodeText(fresh.bytes);
            const unsupported = refuseEncoding(decoded.encoding, input.file_path);
            if (unsupported) return unsupported;
            content = decoded.text;
            if (oldInput === '' && content.length > 0) {
              return fail(`Cannot use an empty old_string on ${input.file_path}: the file already exists and is not empty.`, 'ambiguous_match');
            }
          }

          const { offsets, oldString, newString } = matchEdit(content, oldInput, newInput);
          if (offsets.length === 0) {
            const hint = closestMatch(content, oldInput);
            const detail = hint
              ? hint.whitespaceOnly
                ? ` It matches at line ${hint.line} if whitespace is ignored; copy the exact indentation from the file.`
                : ` The closest match is line ${hint.line}: ${JSON.stringify(hint.text.trim().slice(0, 200))}.`
              : '';
            return fail(`String to replace not found in ${input.file_path}.${detail} Read the file again and copy old_string exactly.`, 'no_match');
          }
          if (offsets.length > 1 && !replaceAll) {
            const lines = offsets.slice(0, 10).map((offset) => lineOf(content, offset));
            return fail(
              `Found ${offsets.length} matches of old_string in ${input.file_path} (lines ${lines.join(', ')}${offsets.length > 10 ? ', …' : ''}), but replace_all is false. ` +
                'Set replace_all to true to replace every occurrence, or add surrounding context so old_string is unique.',
              'ambiguous_match',
            );
          }
          const updated = replaceAt(content, replaceAll ? offsets : offsets.slice(0, 1), oldString, newString);
          await files.write(path, updated);
          await recordWrite(files, stateOf(), context.sessionId, path, updated);
          const replacements = replaceAll ? offsets.length : 1;
          const startLine = lineOf(updated, offsets[0]!);
          const data: EditToolData = {
            filePath: path,
            oldString: oldInput,
            newString: newInput,
            replaceAll,
            replacements,
            startLine,
            structuredPatch: structuredPatch(content, updated),
          };
          const what = !found ? 'created' : replacements > 1 ? `updated (${replacements} replacements)` : 'updated';
          return succeed(`The file ${input.file_path} has been ${what}; the change starts at line ${startLine}.`, data);
        } catch (error) {
          return fail(`Could not edit ${input.file_path}: ${errorText(error)}`, 'io_error');
        }
      });
    },
  });
}
