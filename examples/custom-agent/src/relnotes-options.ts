import { join, resolve } from 'node:path';
import type { ApprovalHandler } from '@tessera/contracts';
import type { CliIO } from '@tessera/preset-cli';
import type { RelnotesFlags } from './args.js';
import type { ReleaseNotesPresetOptions } from './release-notes-preset.js';

/** Where sessions go without `--db`. */
export function defaultDatabasePath(home: string): string {
  return join(home, '.relnotes', 'sessions.db');
}

/**
 * Nobody can be asked in a one-shot run: a call that needs approval is refused, and the model
 * is told which `--allow` rule would let it through.
 */
export const refuseApprovals: ApprovalHandler = {
  async requestApproval(request) {
    const rule = request.suggestedRule ?? request.toolName;
    return { behavior: 'deny', message: `${request.toolName} needs approval, and relnotes has no one to ask. To allow it, run relnotes with --allow "${rule}".` };
  },
};

/** The flags as preset options: each flag is one option, nothing else is decided here. */
export function relnotesPresetOptions(flags: RelnotesFlags, io: CliIO, provider: ReleaseNotesPresetOptions['provider']): ReleaseNotesPresetOptions {
  return {
    cwd: flags.cwd === undefined ? io.cwd : resolve(io.cwd, flags.cwd),
    home: io.home,
    provider,
    database: flags.database === undefined ? defaultDatabasePath(io.home) : resolve(io.cwd, flags.database),
    permissions: { allow: flags.allow },
    approvalHandler: refuseApprovals,
    sessionLog: io.env.TESSERA_SESSION_LOG !== '0',
  };
}
