import { defineTool, toolsPlugin, type Plugin } from '@tessera/kernel';
import { z } from 'zod';
import { DEFAULT_MAX_COMMITS, formatCommits, GitLogError, MAX_COMMITS, readGitLog, type GitCommit } from './read-git-log.js';

/** The permission rule the preset ships, so GitLog runs without asking: it only reads history. */
export const GIT_LOG_RULE = 'GitLog';

const gitLogInput = z.object({
  range: z.string().min(1).describe('A revision range such as "v1.0..HEAD" or "v1.2.0...v1.3.0".'),
  paths: z.array(z.string().min(1)).optional().describe('Only commits that touch these paths (relative to the repository).'),
  maxCommits: z.number().int().min(1).max(MAX_COMMITS).optional().describe(`At most this many commits, newest first (default ${DEFAULT_MAX_COMMITS}).`),
});

/** Reads `git log` for a range in the session's working directory. */
export const gitLogTool = defineTool<z.infer<typeof gitLogInput>, { commits: GitCommit[]; truncated: boolean }>({
  name: 'GitLog',
  description:
    'Lists the commits in a git revision range (newest first): short hash, subject, author, date and message body. ' +
    'Use it to find out what changed between two releases, e.g. range "v1.0..HEAD". Read-only.',
  inputSchema: gitLogInput,
  maxResultChars: 40_000,
  async execute(input, context) {
    try {
      const result = await readGitLog(context.cwd, { range: input.range, ...(input.paths ? { paths: input.paths } : {}), ...(input.maxCommits ? { maxCommits: input.maxCommits } : {}), signal: context.signal });
      return { success: true, output: formatCommits(result, input.range), data: result };
    } catch (error) {
      if (!(error instanceof GitLogError)) throw error;
      return { success: false, output: error.message, error: error.message, errorCode: error.code };
    }
  },
});

/** The plugin that adds GitLog to a composition. */
export function gitLog(): Plugin {
  return toolsPlugin({ name: 'relnotes-git-log' }, gitLogTool);
}
