import {
  assertSafeTaskId,
  BackgroundTaskError,
  cloneTaskMetadata,
  type IBackgroundTaskRequest,
  type TBackgroundTaskKind,
  type TBackgroundTaskMetadata,
} from '@tessera/plugin-background';

const invalid = (message: string, field: string, code = 'background_invalid_request'): BackgroundTaskError =>
  new BackgroundTaskError('validation', message, { code, details: { field } });

/**
 * Checks a spawn request before anything is written to Redis; returns its depth and a clean
 * copy of its metadata. The request travels through Redis as JSON, so it must be plain data.
 */
export function validateSpawnRequest(
  request: IBackgroundTaskRequest,
  kinds: ReadonlySet<TBackgroundTaskKind>,
  maxDepth: number,
): { depth: number; metadata: TBackgroundTaskMetadata } {
  if (typeof request !== 'object' || request === null) throw invalid('spawn() needs a request object with a kind.', 'request');
  if (!kinds.has(request.kind)) {
    throw new BackgroundTaskError('validation', `This BullMQ runtime takes background task kinds ${[...kinds].join(', ') || 'none'}, not "${String(request.kind)}"; add it to the runtime's kinds and run a worker for it.`, {
      code: 'background_unknown_kind',
      details: { field: 'kind' },
    });
  }
  if (typeof request.cwd !== 'string' || request.cwd === '') throw invalid('Background task request needs a non-empty cwd.', 'cwd');
  const depth = request.depth ?? 1;
  if (!Number.isInteger(depth) || depth < 0 || depth > maxDepth) {
    throw new BackgroundTaskError('validation', `Background task depth ${depth} is outside 0..${maxDepth} (maxDepth); nested tasks may not spawn further tasks.`, {
      code: 'background_invalid_depth',
      details: { field: 'depth', depth, maxDepth },
    });
  }
  if (request.kind === 'process' && (typeof request.command !== 'string' || request.command.trim() === '')) {
    throw invalid('A process task needs a non-empty command.', 'command', 'process_invalid_command');
  }
  if (request.kind === 'scheduled') {
    if (typeof request.schedule !== 'string' || request.schedule.trim() === '') throw invalid('A scheduled task needs a cron pattern or an ISO date in schedule.', 'schedule', 'scheduled_invalid_pattern');
    if (request.task?.kind !== 'process' && request.task?.kind !== 'agent') throw invalid('A scheduled task runs a process or agent task; set task.kind.', 'task.kind', 'scheduled_unknown_task_kind');
    if (request.maxRuns !== undefined && !(Number.isInteger(request.maxRuns) && request.maxRuns > 0)) throw invalid('maxRuns must be a positive integer.', 'maxRuns');
  }
  try {
    JSON.stringify(request);
  } catch (error) {
    throw new BackgroundTaskError('validation', `The background task request cannot be serialised to JSON for Redis: ${(error as Error).message}.`, { code: 'background_invalid_request', cause: error });
  }
  return { depth, metadata: cloneTaskMetadata(request.metadata) };
}

/** A cron pattern has 5 or 6 space-separated fields; anything else must parse as a date. */
export function parseSchedule(schedule: string): { pattern: string } | { at: number } {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length === 5 || fields.length === 6) return { pattern: schedule.trim() };
  const at = Date.parse(schedule);
  if (Number.isNaN(at)) throw invalid(`Invalid schedule ${JSON.stringify(schedule)}: use a 5- or 6-field cron pattern or an ISO date.`, 'schedule', 'scheduled_invalid_pattern');
  return { at };
}

export function checkTaskId(id: string): string {
  assertSafeTaskId(id);
  return id;
}
