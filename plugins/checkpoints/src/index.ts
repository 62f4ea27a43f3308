export { editCheckpoints, CAPTURE_STAGE, EDIT_CHECKPOINTS_PLUGIN_NAME } from './edit-checkpoints-plugin.js';
export type { EditCheckpointsOptions } from './edit-checkpoints-plugin.js';
export { FileEditCheckpoints } from './file-edit-checkpoints.js';
export type { FileEditCheckpointsOptions } from './file-edit-checkpoints.js';
export {
  CheckpointManifestError,
  CheckpointNotFoundError,
  CheckpointOutsideWorkspaceError,
  CheckpointRestoreBusyError,
  CheckpointRestoreError,
  CheckpointSessionUnknownError,
  CheckpointSnapshotMissingError,
  InvalidCheckpointIdError,
} from './checkpoint-errors.js';
export type { CapturedFile, CheckpointManifest } from './checkpoint-manifest.js';
export { editTargetOf } from './edit-target.js';
export { reversibleExecution, REVERSIBLE_EXECUTION_PLUGIN_NAME, REVERSIBLE_GUARD_STAGE } from './reversible-execution-plugin.js';
export type { ExecutionIsolation, ReversibleExecutionOptions } from './reversible-execution-plugin.js';
export { agentRunsInWorktrees, reversibilityOf } from './reversible-classification.js';
export type { ReversibilityClass } from './reversible-classification.js';
