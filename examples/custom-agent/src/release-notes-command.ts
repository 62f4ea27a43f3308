import type { ICommandResult, ISystemCommand } from '@tessera/contracts';
import type { Plugin } from '@tessera/kernel';
import { commandModulePlugin, failure, ok, splitArgs, usage } from '@tessera/plugin-commands';
import { GitLogError, readGitLog } from './read-git-log.js';

const HINT = '<range> [path…]';

/** The prompt `/release-notes` sends to the model. */
export function releaseNotesPrompt(range: string, paths: readonly string[]): string {
  const scope = paths.length === 0 ? '' : ` Only changes under ${paths.join(', ')} count; pass them to GitLog as paths.`;
  return `Draft the release notes for ${range}. Read the commits with the GitLog tool (range "${range}") first.${scope} Then write the notes as the release-notes style guide says.`;
}

/**
 * `/release-notes <range> [path…]`: checks the range with git, then asks the model to draft the
 * notes (a `prompt-submit-requested` effect, which the host sends as the next prompt). A bad
 * range is refused here, before any model call.
 */
export const releaseNotesCommandDefinition: ISystemCommand = {
  name: 'release-notes',
  description: 'Draft release notes for a git range (e.g. /release-notes v1.0..HEAD)',
  argumentHint: HINT,
  safety: 'read-only',
  lifecycle: 'inline',
  async execute(context, args): Promise<ICommandResult> {
    const [range, ...paths] = splitArgs(args);
    if (range === undefined) return usage('release-notes', HINT, 'Name the range to draft notes for.');
    try {
      const { commits, truncated } = await readGitLog(context.cwd, { range, paths });
      if (commits.length === 0) return failure(`No commits in ${range}${paths.length > 0 ? ` under ${paths.join(', ')}` : ''}: nothing to write notes about.`);
      const count = `${commits.length}${truncated ? '+' : ''} commit${commits.length === 1 ? '' : 's'}`;
      return ok(`Drafting release notes for ${range} (${count}).`, {
        data: { range, commits: commits.length, truncated },
        effects: [{ type: 'prompt-submit-requested', text: releaseNotesPrompt(range, paths) }],
      });
    } catch (error) {
      if (error instanceof GitLogError) return failure(error.message);
      throw error;
    }
  },
};

export function releaseNotesCommand(): Plugin {
  return commandModulePlugin('release-notes', [releaseNotesCommandDefinition]);
}
