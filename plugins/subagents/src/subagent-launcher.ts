import { createAbortError, TesseraError, type SubagentLauncher, type SubagentLaunchRequest, type SubagentLaunchResult } from '@tessera/contracts';
import type { ISubagentManager } from './types.js';

/** A launched subagent ended without an answer (failed, cancelled, timed out). */
export class SubagentLaunchError extends TesseraError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'subagent_launch_failed', category: 'internal', recoverable: true, details });
  }
}

/**
 * `SubagentLauncher` over a `SubagentManager`: spawns one foreground job, waits for it and
 * returns its final text. Aborting `signal` cancels the job (and rejects with an abort error).
 */
export function createSubagentLauncher(getManager: () => ISubagentManager, isSubagentSession: (sessionId: string) => boolean = () => false): SubagentLauncher {
  return {
    async launch(request: SubagentLaunchRequest): Promise<SubagentLaunchResult> {
      if (request.signal.aborted) throw createAbortError();
      // Subagents cannot spawn subagents; this also stops an agent hook from recursing through
      // the hooks its own verifier subagent triggers.
      if (isSubagentSession(request.parentSessionId)) {
        throw new SubagentLaunchError(`Session ${request.parentSessionId} is itself a subagent, and subagents cannot launch subagents.`, {
          parentSessionId: request.parentSessionId,
          reason: 'nested_subagent',
        });
      }
      const manager = getManager();
      const job = await manager.spawn({
        type: request.agentType ?? 'general-purpose',
        prompt: request.prompt,
        cwd: request.cwd,
        parentSessionId: request.parentSessionId,
        ...(request.parentSession ? { parentSession: request.parentSession } : {}),
        mode: request.background ? 'background' : 'foreground',
        ...(request.model ? { model: request.model } : {}),
        ...(request.isolation ? { isolation: request.isolation } : {}),
        ...(request.allowedTools ? { allowedTools: request.allowedTools } : {}),
        ...(request.forkWorker ? { forkWorker: true } : {}),
      });
      if (request.background) return { text: `Started ${job.type} agent ${job.id} in the background.`, agentId: job.id };
      const onAbort = (): void => void manager.cancel(job.id, 'aborted by the launcher').catch(() => undefined);
      // The signal may have fired while spawn() was pending: a listener added now never would.
      if (request.signal.aborted) onAbort();
      else request.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const done = await manager.wait(job.id);
        if (request.signal.aborted) throw createAbortError();
        if (done.status !== 'completed') {
          throw new SubagentLaunchError(`Subagent ${job.id} (${done.type}) ended ${done.status}${done.error ? `: ${done.error.message}` : ''}.`, {
            agentId: job.id,
            status: done.status,
            ...(done.error ? { error: done.error.code } : {}),
          });
        }
        return { text: done.output ?? '', agentId: job.id };
      } finally {
        request.signal.removeEventListener('abort', onAbort);
      }
    },
  };
}
