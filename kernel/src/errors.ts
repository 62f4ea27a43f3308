import { TesseraError } from '@tessera/contracts';

/** One reason a plugin list cannot form a kernel, with the plugins and token it concerns. */
export interface CompositionProblem {
  /** Machine-readable kind of problem. */
  kind:
    | 'missing_provider'
    | 'duplicate_provider'
    | 'duplicate_plugin'
    | 'undeclared_binding'
    | 'register_failed'
    | 'invalid_plugin'
    | 'duplicate_command'
    | 'duplicate_session_service'
    | 'invalid_command_tool';
  message: string;
  plugins: string[];
  token?: string;
}

/** The plugin list cannot form a kernel. Lists every problem found, not just the first. */
export class KernelCompositionError extends TesseraError {
  readonly problems: readonly CompositionProblem[];

  constructor(problems: CompositionProblem[], cause?: unknown) {
    const lines = problems.map((problem) => `  - ${problem.message}`).join('\n');
    super(`Cannot compose the kernel (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${lines}`, {
      code: 'kernel_composition',
      category: 'configuration',
      recoverable: false,
      cause,
      details: { problems },
    });
    this.problems = problems;
  }
}

/**
 * A plugin factory was given an option it cannot use. Factories check their options and
 * throw this at once (before `createKernel`), naming the factory, the option and the fix.
 */
export class PluginOptionsError extends TesseraError {
  constructor(factory: string, plugin: string, option: string, problem: string) {
    super(`${factory}: ${option} ${problem}.`, {
      code: 'invalid_plugin_options',
      category: 'configuration',
      recoverable: false,
      details: { plugin, option },
    });
  }
}

/** `setPermissionMode` was asked for a mode the session's host does not allow (see `Session.limitPermissionModes`). */
export class PermissionModeNotAllowedError extends TesseraError {
  constructor(mode: string, allowed: readonly string[]) {
    super(`Permission mode "${mode}" is not allowed in this session; the host allows ${allowed.join(', ')}.`, {
      code: 'permission_mode_not_allowed',
      category: 'permission',
      recoverable: true,
      details: { mode, allowed: [...allowed] },
    });
  }
}

/** `run()` (or another call that needs the session idle) was called while a turn runs. */
export class SessionBusyError extends TesseraError {
  constructor(sessionId: string) {
    super(
      `Session ${sessionId} is already running a turn. Wait for run() to settle, or call abort() first.`,
      { code: 'session_busy', category: 'state', recoverable: true, details: { sessionId } },
    );
  }
}

/** The session was used after `shutdown()`. */
export class SessionClosedError extends TesseraError {
  constructor(sessionId: string) {
    super(`Session ${sessionId} has been shut down; create a new session to continue.`, {
      code: 'session_closed',
      category: 'state',
      recoverable: false,
      details: { sessionId },
    });
  }
}

/** The provider sent nothing for `providerTimeout` ms and the call was stopped; `run()` rejects with it. */
export class ProviderTimeoutError extends TesseraError {
  constructor(provider: string, timeoutMs: number) {
    super(
      `Provider "${provider}" sent nothing for ${timeoutMs} ms and was stopped. Retry, or raise providerTimeout if the model is slow to start.`,
      { code: 'provider_timeout', category: 'timeout', recoverable: true, details: { provider, timeoutMs } },
    );
  }
}

/** A `userPromptSubmit` tap blocked the prompt, so nothing was sent; `run()` rejects with it. */
export class PromptBlockedError extends TesseraError {
  /** Who blocked the prompt (a plugin name, `hook`…), when the tap said. */
  readonly source: string | undefined;

  constructor(reason: string, blocked: { source?: string; details?: Record<string, unknown> } = {}) {
    super(`Prompt blocked${blocked.source ? ` by ${blocked.source}` : ' by a userPromptSubmit hook'}: ${reason}`, {
      code: 'prompt_blocked',
      category: 'permission',
      recoverable: true,
      details: { reason, ...(blocked.source ? { source: blocked.source } : {}), ...blocked.details },
    });
    this.source = blocked.source;
  }
}

/** `compact()` was called on a session that has no `Compaction` service. */
export class CompactionUnavailableError extends TesseraError {
  constructor() {
    super('compact() needs a Compaction service: add a compaction plugin to the kernel or pass `compaction` to the Session.', {
      code: 'compaction_unavailable',
      category: 'configuration',
      recoverable: false,
    });
  }
}

/** A session option (or a session setter's argument) is invalid; `details.field` names it. */
export class SessionConfigurationError extends TesseraError {
  constructor(field: string, problem: string) {
    super(`Invalid session option "${field}": ${problem}`, {
      code: 'session_configuration',
      category: 'configuration',
      recoverable: false,
      details: { field },
    });
  }
}
