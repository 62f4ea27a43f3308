import type { Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';
import { filesFor, stateFor, type FileToolOptions } from './common-options.js';
import { structuredPatch, type DiffHunk } from './diff.js';
import { checkFresh, checkWritable, recordWrite, refuseNonRegular } from './freshness.js';
import { withPathLock } from './path-lock.js';
import { errorText, fail, succeed } from './result.js';
import { decodeText } from './workspace-files.js';

export type WriteToolOptions = FileToolOptions;

export interface WriteToolData {
  type: 'create' | 'update';
  filePath: string;
  /** First changed line (1-based); 1 for a new file. */
  startLine: number;
  structuredPatch: DiffHunk[];
  success: true;
}

export const writeInputSchema = z.object({
  file_path: z.string().describe('The absolute path to the file to write (must be absolute, not relative)'),
  content: z.string().describe('The content to write to the file'),
});

export type WriteInput = z.infer<typeof writeInputSchema>;

/**
 * Write: creates or replaces a whole file atomically (as UTF-8), creating parent directories.
 * Replacing an existing file needs a Read of it in this session, with no change on disk since;
 * read-only files and FIFOs, sockets or devices are refused.
 */
export function writeTool(options: WriteToolOptions = {}): Tool<WriteInput, WriteToolData> {
  const files = filesFor(options);
  const stateOf = stateFor(options);
  return defineTool<WriteInput, WriteToolData>({
    name: 'Write',
    description:
      'Writes a file to the local filesystem, replacing it if it exists. file_path must be absolute. ' +
      'An existing file must be read with the Read tool first. Prefer Edit for changes to existing files.',
    inputSchema: writeInputSchema,
    async execute(input, context) {
      const resolved = await files.resolve(input.file_path, context);
      if (!resolved.ok) return fail(resolved.message, resolved.code);
      const path = resolved.path;
      // Held from the freshness check to the read record, so a concurrent Write or Edit of the same file waits and then sees this one's change.
      return withPathLock(path, async () => {
        try {
          const found = await files.stat(path);
          if (found?.isDirectory) return fail(`${input.file_path} is a directory; Write needs a file path.`, 'is_directory');
          let before = '';
          if (found) {
            const refused = refuseNonRegular(found, input.file_path, 'Write') ?? (await checkWritable(files, path, input.file_path, 'Write'));
            if (refused) return refused;
            const fresh = await checkFresh(files, stateOf(), context.sessionId, path, input.file_path, found);
            if (!fresh.ok) return fresh.result;
            before = decodeText(fresh.bytes).text;
          }
          await files.write(path, input.content);
          await recordWrite(files, stateOf(), context.sessionId, path, input.content);
          const hunks = structuredPatch(before, input.content);
          const data: WriteToolData = {
            type: found ? 'update' : 'create',
            filePath: path,
            startLine: hunks[0] ? Math.max(1, hunks[0].newStart) : 1,
            structuredPatch: hunks,
            success: true,
          };
          const output = found ? `The file ${input.file_path} has been updated.` : `File created successfully at: ${input.file_path}`;
          return succeed(output, data);
        } catch (error) {
          return fail(`Could not write ${input.file_path}: ${errorText(error)}`, 'io_error');
        }
      });
    },
  });
}
