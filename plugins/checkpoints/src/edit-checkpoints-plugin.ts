import { Clock, describeError, EditCheckpoints, SandboxPaths, systemClock, WorkspaceGrants, type PreToolUseDecision, type SessionServices } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, Stage, type Plugin } from '@tessera/kernel';
import { editTargetOf } from './edit-target.js';
import { FileEditCheckpoints } from './file-edit-checkpoints.js';

export const EDIT_CHECKPOINTS_PLUGIN_NAME = 'edit-checkpoints';

/**
 * Capture runs after every tap that may still stop or rewrite the call (the permission guard,
 * PreToolUse hooks, input rewrites at `Default`), so it keeps the file the tool will really
 * change. A call a later observer could not stop anyway; one denied after the capture only
 * leaves an unchanged pre-image, which restores to the same bytes.
 */
export const CAPTURE_STAGE = Stage.Observe - 1;

export interface EditCheckpointsOptions {
  /**
   * The directory that holds `.tessera/checkpoints/`. Default: each session's cwd, so the
   * checkpoints of a project stay in the project.
   */
  root?: string;
  /** Time for `createdAt` / `finalizedAt`. Default: the kernel's `Clock`, else the system clock. */
  clock?: Clock;
}

/**
 * Provides `EditCheckpoints`: one checkpoint per prompt turn, holding each file as it was
 * before the turn first changed it, so a caller can list, inspect and restore turns.
 *
 * The interactive session opens a turn with `beginTurn` before a prompt and closes it with
 * `finalizeTurn` after; while a turn is open, a `preToolUse` tap copies the target of every
 * Write, Edit, MultiEdit, NotebookEdit and declared edit-family tool call before the tool
 * runs. A failed copy denies the call, so no change happens without its pre-image. Sessions
 * with no open turn (a plain `Session`) and sandboxed file tools (`SandboxPaths` bound: their
 * paths are not host paths) are not captured.
 *
 * The factory only checks and keeps its options; each kernel's container builds its own
 * `FileEditCheckpoints`.
 */
export function editCheckpoints(options: EditCheckpointsOptions = {}): Plugin {
  checkOptions(options);
  const { root, clock } = options;
  return definePlugin({
    name: EDIT_CHECKPOINTS_PLUGIN_NAME,
    provides: [EditCheckpoints],
    optional: [Clock, SandboxPaths, WorkspaceGrants],
    register({ bind, hooks }) {
      bind(EditCheckpoints)
        .toResolvedValue(
          (kernelClock: Clock | undefined, grants: WorkspaceGrants | undefined) =>
            new FileEditCheckpoints({
              ...(root === undefined ? {} : { root }),
              clock: clock ?? kernelClock ?? systemClock,
              ...(grants === undefined ? {} : { additionalDirectories: (cwd: string) => grants.additionalDirectories(cwd) }),
            }),
          [
            { serviceIdentifier: Clock, optional: true },
            { serviceIdentifier: WorkspaceGrants, optional: true },
          ],
        )
        .inSingletonScope()
        .onDeactivation((checkpoints) => (checkpoints as FileEditCheckpoints).close());

      hooks.sessionStart.tap({ name: `${EDIT_CHECKPOINTS_PLUGIN_NAME}:workspace`, stage: Stage.Observe }, ({ session }) => {
        recorderOf(session.services)?.rememberSession(session.sessionId, session.cwd);
      });

      hooks.preToolUse.tapPromise(
        { name: `${EDIT_CHECKPOINTS_PLUGIN_NAME}:capture`, stage: CAPTURE_STAGE },
        async (context): Promise<PreToolUseDecision | undefined> => {
          const { session } = context;
          const recorder = recorderOf(session.services);
          // A subagent's edit in the parent's folder goes into the parent's open turn.
          const recording = await recorder?.recordingFor(session.sessionId, session.cwd);
          if (recorder === undefined || recording === undefined) return undefined;
          if (session.services.getOptional(SandboxPaths) !== undefined) return undefined;
          const target = editTargetOf(context);
          if (target === undefined) return undefined;
          try {
            await recorder.capture(recording, target);
            return undefined;
          } catch (error) {
            return {
              decision: 'deny',
              source: 'checkpoints',
              reason: `edit checkpoints could not save ${target} before ${context.toolName} changes it (${describeError(error)}); the file was not changed. Fix the checkpoint directory (.tessera/checkpoints) or remove editCheckpoints() to edit without checkpoints.`,
            };
          }
        },
      );

      // A subagent's session is not one a turn is opened for: while it runs, its edits are its parent's (`recordingFor`).
      hooks.subagentStart.tap({ name: `${EDIT_CHECKPOINTS_PLUGIN_NAME}:subagent`, stage: Stage.Observe }, ({ session, agentId }) => {
        recorderOf(session.services)?.delegate(agentId, session.sessionId);
      });
      hooks.subagentStop.tap({ name: `${EDIT_CHECKPOINTS_PLUGIN_NAME}:subagent`, stage: Stage.Observe }, ({ session, agentId }) => {
        recorderOf(session.services)?.undelegate(agentId);
      });

      // A session that ends mid-turn (shut down during a prompt) leaves a finalised checkpoint.
      hooks.sessionEnd.tapPromise({ name: `${EDIT_CHECKPOINTS_PLUGIN_NAME}:finalize`, stage: Stage.Observe }, async ({ session }) => {
        const recorder = recorderOf(session.services);
        if (recorder?.isRecording(session.sessionId)) await recorder.finalizeTurn(session.sessionId);
      });
    },
  });
}

/** This package's service when it is the session's `EditCheckpoints` (a replacement is not captured for). */
function recorderOf(services: SessionServices): FileEditCheckpoints | undefined {
  const service = services.getOptional(EditCheckpoints);
  return service instanceof FileEditCheckpoints ? service : undefined;
}

function checkOptions(options: EditCheckpointsOptions): void {
  const invalid = (option: string, problem: string): PluginOptionsError =>
    new PluginOptionsError('editCheckpoints', EDIT_CHECKPOINTS_PLUGIN_NAME, option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  if (options.root !== undefined && (typeof options.root !== 'string' || options.root === '')) throw invalid('root', 'must be a non-empty directory path');
  if (options.clock !== undefined && typeof options.clock?.now !== 'function') throw invalid('clock', 'must be a Clock (an object with now())');
}
