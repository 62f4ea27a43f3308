import { constants } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { copyFile, lstat, mkdir, open, readdir, realpath, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import {
  assertValidSessionId,
  isInsidePath,
  TesseraError,
  type Clock,
  type EditCheckpoints,
  type IEditCheckpointFile,
  type IEditCheckpointInspection,
  type IEditCheckpointRestoreResult,
  type IEditCheckpointSummary,
  copyWith,
} from '@tessera/contracts';
import {
  CheckpointNotFoundError,
  CheckpointOutsideWorkspaceError,
  CheckpointRestoreBusyError,
  CheckpointRestoreError,
  CheckpointSessionUnknownError,
  CheckpointSnapshotMissingError,
  InvalidCheckpointIdError,
} from './checkpoint-errors.js';
import {
  CAPTURE_JOURNAL,
  checkpointIds,
  isCheckpointId,
  newCheckpointId,
  promptLine,
  readManifest,
  restorePlan,
  snapshotAvailable,
  sequenceOf,
  SNAPSHOT_DIRECTORY,
  snapshotName,
  summaryOf,
  writeManifest,
  type CapturedFile,
  type CheckpointManifest,
} from './checkpoint-manifest.js';
import { displayPath, outermostMissing, pruneEmptyDirectories, realTarget, statIfPresent } from './file-paths.js';

export interface FileEditCheckpointsOptions {
  /** The directory that holds `.tessera/checkpoints/`; default: each session's cwd. */
  root?: string;
  clock: Clock;
  /**
   * Directories a session may edit besides its cwd (`permissions.additionalDirectories`, from
   * `WorkspaceGrants`). Capture and restore stay inside the cwd and these, as the file tools do.
   */
  additionalDirectories?: (cwd: string) => readonly string[];
}

/** The turn a session is running now. */
interface OpenTurn {
  manifest: CheckpointManifest;
  directory: string;
  /** Real paths already captured in this turn: a later change of one keeps the first pre-image. */
  captured: Set<string>;
  snapshotsReady: boolean;
  /** `captures.jsonl`, opened on the first capture and closed when the turn is finalised. */
  journal?: FileHandle;
  /** A journal write failed part-way: the next line starts on a fresh line. */
  journalTorn: boolean;
  /** Captures (and the final write) run one after another, so manifest writes never interleave. */
  queue: Promise<void>;
}

/**
 * Edit checkpoints kept as files in the project: `<root>/.tessera/checkpoints/<session id>/
 * <checkpoint id>/manifest.json`, with the pre-images under `files/`. Bound by
 * `editCheckpoints()`; its `preToolUse` tap calls `capture` before each file change.
 *
 * State in memory is only what a running process needs: the turn each session has open, and
 * each session's cwd (from `beginTurn` or the session's start), because `list`, `inspect` and
 * `restore` take a session id alone. Everything else is read from disk on each call, so
 * another process's checkpoints (a resumed session) are listed too.
 */
export class FileEditCheckpoints implements EditCheckpoints {
  readonly #root: string | undefined;
  readonly #clock: Clock;
  readonly #additionalDirectories: ((cwd: string) => readonly string[]) | undefined;
  readonly #open = new Map<string, OpenTurn>();
  readonly #workspaces = new Map<string, string>();
  /** beginTurn, finalizeTurn and restore of one session run one at a time. */
  readonly #sessionQueues = new Map<string, Promise<unknown>>();

  constructor(options: FileEditCheckpointsOptions) {
    this.#root = options.root === undefined ? undefined : resolve(options.root);
    this.#clock = options.clock;
    this.#additionalDirectories = options.additionalDirectories;
  }

  /**
   * The real paths a session's files may be captured from and restored to: its cwd and the
   * granted directories, as the file tools' workspace. Never anything a manifest says.
   */
  async #workspaceRoots(sessionId: string): Promise<string[]> {
    const cwd = this.#workspaces.get(sessionId) ?? this.#root;
    if (cwd === undefined) throw new CheckpointSessionUnknownError(sessionId);
    const listed = [cwd, ...(this.#additionalDirectories?.(cwd) ?? []).map((directory) => resolve(cwd, directory))];
    return Promise.all([...new Set(listed)].map((root) => realTarget(root)));
  }

  /** Records where a session works, so its checkpoints can be listed before its first turn. */
  rememberSession(sessionId: string, cwd: string): void {
    if (isAbsolute(cwd)) this.#workspaces.set(sessionId, resolve(cwd));
  }

  /** Whether a turn is open for the session, so file changes are being captured. */
  isRecording(sessionId: string): boolean {
    return this.#open.has(sessionId);
  }

  /** Subagent sessions (by id) and the session that started each: their edits belong to its turn. */
  readonly #delegates = new Map<string, string>();

  /**
   * From now until `undelegate`, the edits of `childSessionId` (a subagent) count as edits of
   * `parentSessionId`'s open turn when the child works in the same folder (`recordingFor`):
   * restoring that turn undoes what the subagent changed too.
   */
  delegate(childSessionId: string, parentSessionId: string): void {
    if (childSessionId !== parentSessionId) this.#delegates.set(childSessionId, parentSessionId);
  }

  undelegate(childSessionId: string): void {
    this.#delegates.delete(childSessionId);
  }

  /**
   * The session whose open turn captures an edit made by `sessionId` working in `cwd`: the
   * session itself when it records, else the nearest session that started it (`delegate`, a
   * subagent of a subagent too) whose turn works in that same folder. A subagent in a worktree of
   * its own works elsewhere: its edits are not the turn's. `undefined` when none records.
   */
  async recordingFor(sessionId: string, cwd: string): Promise<string | undefined> {
    if (this.#open.has(sessionId)) return sessionId;
    let current = this.#delegates.get(sessionId);
    for (let depth = 0; current !== undefined && depth < 16; depth += 1) {
      const turn = this.#open.get(current);
      // The turn's cwd is stored as a real path: the subagent's is compared the same way (`/tmp` may be a link).
      if (turn !== undefined) return turn.manifest.cwd === (await realpath(cwd).catch(() => resolve(cwd))) ? current : undefined;
      current = this.#delegates.get(current);
    }
    return undefined;
  }

  async beginTurn(session: { sessionId: string; cwd: string }, prompt: string): Promise<IEditCheckpointSummary> {
    const { sessionId, cwd } = session;
    assertValidSessionId(sessionId);
    if (typeof cwd !== 'string' || !isAbsolute(cwd)) {
      throw new TesseraError(`beginTurn needs the session's absolute cwd (got ${JSON.stringify(cwd)}).`, {
        code: 'invalid_checkpoint_session',
        category: 'validation',
        recoverable: false,
        details: { sessionId, cwd },
      });
    }
    this.rememberSession(sessionId, cwd);
    return this.#serialized(sessionId, async () => {
      // A turn nobody closed (its prompt crashed before finalizeTurn) ends here.
      if (this.#open.has(sessionId)) await this.#finalize(sessionId);
      const sessionDirectory = this.#sessionDirectory(sessionId);
      const ids = await checkpointIds(sessionDirectory);
      const sequence = ids.length === 0 ? 1 : sequenceOf(ids.at(-1) as string) + 1;
      const id = newCheckpointId(sequence);
      const directory = join(sessionDirectory, id);
      const manifest: CheckpointManifest = {
        version: 1,
        id,
        sessionId,
        sequence,
        prompt: promptLine(prompt),
        // Captured paths are real paths; display them relative to the real cwd.
        cwd: await realpath(cwd).catch(() => resolve(cwd)),
        createdAt: new Date(this.#clock.now()).toISOString(),
        files: [],
      };
      await mkdir(directory, { recursive: true });
      await writeManifest(directory, manifest);
      this.#open.set(sessionId, { manifest, directory, captured: new Set(), snapshotsReady: false, journalTorn: false, queue: Promise.resolve() });
      return summaryOf(manifest);
    });
  }

  async finalizeTurn(sessionId: string): Promise<void> {
    assertValidSessionId(sessionId);
    await this.#serialized(sessionId, () => this.#finalize(sessionId));
  }

  async discardTurn(sessionId: string): Promise<boolean> {
    assertValidSessionId(sessionId);
    return this.#serialized(sessionId, async () => {
      const turn = this.#open.get(sessionId);
      if (turn === undefined) return false;
      await turn.queue;
      if (turn.manifest.files.length > 0 || turn.journal !== undefined) {
        await this.#finalize(sessionId);
        return false;
      }
      this.#open.delete(sessionId);
      await rm(turn.directory, { recursive: true, force: true });
      return true;
    });
  }

  /**
   * Keeps the file at `path` as it is now, once per turn, before the change about to happen.
   * Does nothing when the session has no open turn. Rejects when the copy or the manifest
   * cannot be written: the caller must then stop the change.
   */
  capture(sessionId: string, path: string): Promise<void> {
    const turn = this.#open.get(sessionId);
    if (turn === undefined) return Promise.resolve();
    const run = turn.queue.then(() => this.#captureNow(turn, path));
    turn.queue = run.catch(() => undefined);
    return run;
  }

  /** Finalises every open turn (the kernel calls it when it releases the service). */
  async close(): Promise<void> {
    await Promise.all([...this.#open.keys()].map((sessionId) => this.finalizeTurn(sessionId)));
  }

  async list(sessionId: string): Promise<IEditCheckpointSummary[]> {
    assertValidSessionId(sessionId);
    const directory = this.#sessionDirectory(sessionId);
    const ids = await checkpointIds(directory);
    const manifests = await Promise.all(ids.map((id) => this.#manifest(sessionId, directory, id)));
    return manifests.map(summaryOf);
  }

  async inspect(sessionId: string, checkpointId: string): Promise<IEditCheckpointInspection> {
    const { directory, ids } = await this.#locate(sessionId, checkpointId);
    const manifest = await this.#manifest(sessionId, directory, checkpointId);
    const checkpointDirectory = join(directory, checkpointId);
    const files = await Promise.all(
      manifest.files.map(async (file): Promise<IEditCheckpointFile> => ({
        path: file.path,
        displayPath: displayPath(file.path, manifest.cwd),
        existed: file.existed,
        snapshotAvailable: await snapshotAvailable(checkpointDirectory, file),
        ...(file.bytes === undefined ? {} : { bytes: file.bytes }),
      })),
    );
    const sequence = sequenceOf(checkpointId);
    return {
      checkpoint: summaryOf(manifest),
      files,
      rollback: ids.filter((id) => sequenceOf(id) >= sequence).reverse(),
      kept: ids.filter((id) => sequenceOf(id) < sequence),
    };
  }

  async restore(sessionId: string, checkpointId: string): Promise<IEditCheckpointRestoreResult> {
    assertValidSessionId(sessionId);
    if (!isCheckpointId(checkpointId)) throw new InvalidCheckpointIdError(checkpointId);
    return this.#serialized(sessionId, async () => {
      const open = this.#open.get(sessionId);
      if (open !== undefined) throw new CheckpointRestoreBusyError(sessionId, open.manifest.id);
      const { directory, ids } = await this.#locate(sessionId, checkpointId);
      const sequence = sequenceOf(checkpointId);
      const range = ids.filter((id) => sequenceOf(id) >= sequence);
      const manifests = await Promise.all(range.map((id) => this.#manifest(sessionId, directory, id)));
      const plan = restorePlan(manifests);
      // A manifest is a file in the project, which other programs can change: every path it
      // names must still land inside the workspace (symbolic links resolved) before anything is written.
      // The file is then written or deleted at the path checked (`target`), never at the
      // manifest's text, which a link could send elsewhere.
      const roots = await this.#workspaceRoots(sessionId);
      const targets = new Map<CapturedFile, string>();
      for (const { manifest, file } of plan) {
        // The folder's real path and the name in it: a link that took the file's place since
        // the capture is removed or replaced, never followed to the file it points at.
        const target = join(await realTarget(dirname(file.path)), basename(file.path));
        if (!roots.some((root) => isInsidePath(target, root))) throw new CheckpointOutsideWorkspaceError(manifest.id, file.path, roots);
        targets.set(file, target);
      }
      // Every pre-image is checked before the first file is touched.
      for (const { manifest, file } of plan) {
        if (file.existed && !(await snapshotAvailable(join(directory, manifest.id), file))) {
          throw new CheckpointSnapshotMissingError(manifest.id, file.path, file.snapshot ?? '');
        }
      }
      const restoredFiles: string[] = [];
      const deletedFiles: string[] = [];
      // Folders a turn in the range created, pruned once every file is back: a folder one turn
      // created may hold files a later turn created too.
      const prunes: Array<{ from: string; outermost: string }> = [];
      for (const { manifest, file } of plan) {
        const target = targets.get(file) as string;
        try {
          if (file.existed) {
            await mkdir(dirname(target), { recursive: true });
            if ((await lstat(target).catch(() => undefined))?.isSymbolicLink()) await rm(target);
            await copyFile(join(directory, manifest.id, SNAPSHOT_DIRECTORY, file.snapshot as string), target);
            restoredFiles.push(file.path);
          } else {
            if (await lstat(target).then(() => true, () => false)) {
              await rm(target, { force: true });
              deletedFiles.push(file.path);
            }
            // Only where the path still is what was captured: a folder reached through a link now is not the one the turn created.
            if (file.createdDirectory !== undefined && target === file.path) prunes.push({ from: dirname(target), outermost: file.createdDirectory });
          }
        } catch (error) {
          throw new CheckpointRestoreError(manifest.id, file.path, error);
        }
      }
      // Deepest first, so a parent is tried once its children are gone.
      prunes.sort((left, right) => right.from.length - left.from.length);
      for (const { from, outermost } of prunes) await pruneEmptyDirectories(from, outermost);
      // Only once every file is back: a failure above leaves every checkpoint for a retry.
      // Each directory is renamed out of the list first (a name that is no checkpoint id), then
      // deleted: a crash during the delete leaves a directory `list` skips, never a checkpoint
      // without its manifest that would fail every later list and restore.
      const removedCheckpoints = [...range].reverse();
      for (const id of removedCheckpoints) {
        const doomed = join(directory, `${REMOVED_PREFIX}${id}.${randomUUID().slice(0, 8)}`);
        await rename(join(directory, id), doomed);
        // Out of the list already: a delete that fails (or a crash) leaves it for the next sweep.
        await rm(doomed, { recursive: true, force: true }).catch(() => undefined);
      }
      await sweepRemoved(directory);
      return { checkpointId, restoredFiles, deletedFiles, removedCheckpoints };
    });
  }

  async #captureNow(turn: OpenTurn, path: string): Promise<void> {
    const target = await realTarget(resolve(path));
    if (turn.captured.has(target)) return;
    // Outside the workspace the file tools refuse to write, so there is nothing to keep; copying
    // the file into the project's checkpoints would put it where the model can read it.
    const roots = await this.#workspaceRoots(turn.manifest.sessionId);
    if (!roots.some((root) => isInsidePath(target, root))) return;
    const found = await statIfPresent(target);
    // Directories, FIFOs and devices: the file tools refuse them, so there is nothing to keep.
    if (found !== undefined && !found.isFile()) return;
    let entry: CapturedFile;
    if (found === undefined) {
      const createdDirectory = await outermostMissing(dirname(target));
      entry = { path: target, existed: false, ...(createdDirectory === undefined ? {} : { createdDirectory }) };
    } else {
      const snapshot = snapshotName(turn.manifest.files.length + 1);
      const snapshots = join(turn.directory, SNAPSHOT_DIRECTORY);
      if (!turn.snapshotsReady) {
        await mkdir(snapshots, { recursive: true });
        turn.snapshotsReady = true;
      }
      // A copy-on-write clone where the file system offers one, else a plain copy.
      await copyFile(target, join(snapshots, snapshot), constants.COPYFILE_FICLONE);
      entry = { path: target, existed: true, snapshot, bytes: found.size };
    }
    // The line goes down after the pre-image is complete and before the tool may run.
    turn.journal ??= await open(join(turn.directory, CAPTURE_JOURNAL), 'a');
    const line = `${turn.journalTorn ? '\n' : ''}${JSON.stringify(entry)}\n`;
    turn.journalTorn = true;
    await turn.journal.write(line);
    turn.journalTorn = false;
    turn.manifest = copyWith(turn.manifest, { files: [...turn.manifest.files, entry] });
    turn.captured.add(target);
  }

  async #finalize(sessionId: string): Promise<void> {
    const turn = this.#open.get(sessionId);
    if (turn === undefined) return;
    this.#open.delete(sessionId);
    await turn.queue;
    const finalized = copyWith(turn.manifest, { finalizedAt: new Date(this.#clock.now()).toISOString() });
    try {
      await writeManifest(turn.directory, finalized);
    } catch (error) {
      // Removed meanwhile (a restore from another process): there is nothing left to finalise.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    } finally {
      await turn.journal?.close();
    }
    // The manifest now holds every capture (and says so with finalizedAt): the journal is spent.
    if (turn.journal !== undefined) await rm(join(turn.directory, CAPTURE_JOURNAL), { force: true });
  }

  async #locate(sessionId: string, checkpointId: string): Promise<{ directory: string; ids: string[] }> {
    assertValidSessionId(sessionId);
    if (!isCheckpointId(checkpointId)) throw new InvalidCheckpointIdError(checkpointId);
    const directory = this.#sessionDirectory(sessionId);
    const ids = await checkpointIds(directory);
    if (!ids.includes(checkpointId)) throw new CheckpointNotFoundError(sessionId, checkpointId, ids);
    return { directory, ids };
  }

  /** The open turn's manifest from memory (it may be mid-capture), any other from disk. */
  #manifest(sessionId: string, directory: string, id: string): Promise<CheckpointManifest> {
    const open = this.#open.get(sessionId);
    if (open?.manifest.id === id) return Promise.resolve(open.manifest);
    return readManifest(join(directory, id), { id, sessionId });
  }

  /** Only called with a validated session id: the id is one path segment. */
  #sessionDirectory(sessionId: string): string {
    const base = this.#root ?? this.#workspaces.get(sessionId);
    if (base === undefined) throw new CheckpointSessionUnknownError(sessionId);
    return join(base, '.tessera', 'checkpoints', sessionId);
  }

  #serialized<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#sessionQueues.get(sessionId) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => undefined);
    this.#sessionQueues.set(sessionId, settled);
    void settled.then(() => {
      if (this.#sessionQueues.get(sessionId) === settled) this.#sessionQueues.delete(sessionId);
    });
    return run;
  }
}

/** A restore renames a checkpoint it removes to this prefix + its id first (never a checkpoint id). */
const REMOVED_PREFIX = '.removed-';

/** Deletes what restores renamed out of the list but could not delete (a crash, a failed delete). Best effort. */
async function sweepRemoved(directory: string): Promise<void> {
  const entries = await readdir(directory).catch(() => [] as string[]);
  await Promise.all(entries.filter((name) => name.startsWith(REMOVED_PREFIX)).map((name) => rm(join(directory, name), { recursive: true, force: true }).catch(() => undefined)));
}
