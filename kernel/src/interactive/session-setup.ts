import { resolve as resolvePath } from 'node:path';
import {
  Diagnostics,
  SandboxPaths,
  SandboxToolFactory,
  SessionStore,
  SystemPromptBuilder,
  TesseraError,
  compareText,
  copyWith,
  processWarningDiagnostics,
  type ISessionRecord,
  type SandboxToolSet,
  type SessionServices,
  type ToolSource,
} from '@tessera/contracts';
import type { Kernel, KernelSessionOptions } from '../kernel.js';
import type { Session } from '../session.js';
import { ContainerSessionServices } from '../session-services.js';
import { ResumeSessionCwdMismatchError, ResumeSessionNotFoundError } from './interactive-session-errors.js';
import { firstPromptOf } from './interactive-session-helpers.js';
import type { InteractiveSessionOptions, IResumableSession } from './interactive-session-options.js';

// How an `InteractiveSession` gets its kernel session: resumed, forked or new, with the system
// prompt, the sandbox and the command tools its options ask for. Functions of the options: the
// facade calls them once, from `initialize`.

/** Record field holding the context files' "Compact Instructions" (for a resumed or forked session). */
const COMPACT_FIELD = 'compactInstructions';

/** The session `options` ask for, from `kernel`; `commandToolSource` is the facade's route to commands for the model. */
export async function createSession(kernel: Kernel, options: InteractiveSessionOptions, commandToolSource: ToolSource): Promise<Session> {
  const cwd = options.cwd ?? process.cwd();
  const store = kernel.getOptional(SessionStore);
  let record: ISessionRecord | undefined;
  if (options.resumeSessionId !== undefined) {
    record = await store?.load(options.resumeSessionId);
    if (!record) throw new ResumeSessionNotFoundError(options.resumeSessionId);
    // A folder given with the id must be the session's own (an id alone resumes it where it was).
    if (options.cwd !== undefined && typeof record.cwd === 'string' && resolvePath(record.cwd) !== resolvePath(options.cwd)) {
      throw new ResumeSessionCwdMismatchError(options.resumeSessionId, record.cwd, options.cwd);
    }
  } else if (options.continueMostRecent) {
    const newest = (await listStored(store)).find((stored) => stored.cwd === cwd);
    record = newest === undefined ? undefined : await store!.load(newest.id);
  }
  const fork = record !== undefined && options.forkSession === true;

  // Built first: a client the tools cannot use is refused before the sandbox is restored or hydrated.
  const sandboxed = sandboxTools(kernel, options);
  // A snapshot restores the sandbox as it was; a fresh manifest would overwrite it.
  let restored = false;
  const snapshotId = record?.sandboxSnapshotId;
  if (record && !fork && typeof snapshotId === 'string' && options.sandboxClient?.restore) {
    await options.sandboxClient.restore(snapshotId);
    restored = true;
  }
  if (!restored && options.workspaceManifest !== undefined && options.sandboxClient) {
    if (!options.applyWorkspaceManifest) {
      throw new TesseraError('workspaceManifest needs applyWorkspaceManifest (e.g. from @tessera/plugin-tools) to apply it.', {
        code: 'invalid_interactive_options',
        category: 'configuration',
        recoverable: false,
      });
    }
    await options.applyWorkspaceManifest(options.sandboxClient, options.workspaceManifest, cwd);
  }

  // copyWith, not spreads followed by fields: Node 20 adds those slowly (docs/adr/0003).
  const own = options.sessionOptions;
  const base: KernelSessionOptions = copyWith(own ?? {}, {
    toolSources: [...(own?.toolSources ?? []), commandToolSource],
    ...(sandboxed
      ? {
          replaceTools: [...(own?.replaceTools ?? []), ...sandboxed.tools],
          serviceOverrides: [...(own?.serviceOverrides ?? []), ...sandboxed.services],
          removeTools: [...(own?.removeTools ?? []), ...(sandboxed.removeTools ?? [])],
        }
      : {}),
    ...(options.provider ? { provider: options.provider } : {}),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.permissionMode === undefined ? {} : { permissionMode: options.permissionMode }),
  });
  // The context files' "Compact Instructions" are kept in the record, so a resumed or forked
  // session compacts by them without building its prompt again.
  const storedCompact = typeof record?.[COMPACT_FIELD] === 'string' ? (record[COMPACT_FIELD] as string) : undefined;
  if (record && !fork) {
    const given = options.systemPrompt ?? record.systemPrompt;
    const systemMessage = given === undefined ? options.appendSystemPrompt : withAppended(given, options);
    const resumed = copyWith(base, { ...(systemMessage === undefined ? {} : { systemMessage }), ...(storedCompact === undefined ? {} : { compactInstructions: storedCompact }) });
    return kernel.resumeSession(record, resumed);
  }
  const system = await systemPrompt(kernel, options, record?.cwd ?? cwd, record);
  const compactInstructions = system.compactInstructions ?? storedCompact;
  const recordFields = { ...(options.name === undefined ? {} : { name: options.name }), ...(compactInstructions === undefined ? {} : { [COMPACT_FIELD]: compactInstructions }) };
  return kernel.createSession(copyWith(base, {
    cwd: record?.cwd ?? cwd,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    ...(system.prompt === undefined ? {} : { systemMessage: system.prompt }),
    ...(compactInstructions === undefined ? {} : { compactInstructions }),
    ...(fork ? { history: record!.history, startSource: 'resume' as const } : {}),
    recordFields,
  }));
}

/**
 * Warns (once per session, as a diagnostic) when a `sandboxClient` is given but the session's
 * tools do not reach it.
 */
export function reportUnsandboxedTools(session: Session, options: InteractiveSessionOptions): void {
  // The sandbox client hydrates, snapshots and restores the workspace; the tools reach it when
  // they were composed sandboxed (`builtinTools({ sandbox })`) or built for this session by the
  // `SandboxToolFactory` (both give the session `SandboxPaths`). Said once, loudly, otherwise:
  // Bash, Write and Edit would run on the host while the sandbox looks in use.
  if (options.sandboxClient && !session.services.getOptional(SandboxPaths)) {
    (session.services.getOptional(Diagnostics) ?? processWarningDiagnostics).report({
      severity: 'warning',
      code: 'TESSERA_SANDBOX_TOOLS_UNSANDBOXED',
      source: 'interactive-session',
      message:
        'InteractiveSession got a sandboxClient, but its tools are not sandboxed and no SandboxToolFactory is bound: Bash, Read, Write and Edit run on this host. ' +
        'Compose the built-in tools with builtinTools() (it binds the factory, so each session with a sandboxClient gets sandboxed tools), ' +
        'or with builtinTools({ sandbox: { client } }) to sandbox every session of the kernel.',
    });
  }
}

/**
 * This session's sandboxed Bash, Read, Write and Edit, the services they need and the host
 * tools it no longer offers (BashOutput, KillShell), when a
 * `sandboxClient` is given, the kernel's tools are not sandboxed kernel-wide (no `SandboxPaths`
 * bound) and a `SandboxToolFactory` is bound. Resume and fork get them too (same options).
 */
function sandboxTools(kernel: Kernel, options: InteractiveSessionOptions): SandboxToolSet | undefined {
  const client = options.sandboxClient;
  if (!client || kernel.getOptional(SandboxPaths)) return undefined;
  const factory = kernel.getOptional(SandboxToolFactory);
  return factory?.create({ client, ...(options.sandboxRoot === undefined ? {} : { root: options.sandboxRoot }) });
}

/**
 * `prompt` with `appendSystemPrompt` after it (as the builder joins sections). A stored prompt
 * that already ends with it (a session resumed with the same flag again) gets it once.
 */
function withAppended(prompt: string, options: InteractiveSessionOptions): string {
  const append = options.appendSystemPrompt?.trim();
  return append === undefined || append === '' || prompt.trimEnd().endsWith(append) ? prompt : `${prompt}\n\n${append}`;
}

async function systemPrompt(kernel: Kernel, options: InteractiveSessionOptions, cwd: string, record: ISessionRecord | undefined): Promise<{ prompt?: string; compactInstructions?: string }> {
  if (options.systemPrompt !== undefined) return { prompt: withAppended(options.systemPrompt, options) };
  if (record?.systemPrompt !== undefined) return { prompt: withAppended(record.systemPrompt, options) };
  const builder = kernel.getOptional(SystemPromptBuilder);
  if (!builder) return options.appendSystemPrompt === undefined ? {} : { prompt: options.appendSystemPrompt };
  const services: SessionServices = new ContainerSessionServices(kernel.container);
  const built = await builder.build({
    cwd,
    services,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: options.appendSystemPrompt }),
  });
  return { prompt: built.prompt, ...(built.compactInstructions === undefined ? {} : { compactInstructions: built.compactInstructions }) };
}

/**
 * Stored sessions of `cwd` (all when omitted), newest first, for a picker: id, name, first
 * prompt, updated time and message count.
 */
export async function resumableSessions(kernel: Kernel, cwd?: string): Promise<IResumableSession[]> {
  const records = await listStored(kernel.getOptional(SessionStore));
  return records
    .filter((record) => cwd === undefined || record.cwd === cwd)
    .map((record) => ({
      id: record.id,
      ...(typeof record.name === 'string' ? { name: record.name } : {}),
      cwd: record.cwd,
      firstPrompt: firstPromptOf(record),
      updatedAt: record.updatedAt,
      messageCount: record.messages.length,
    }));
}

async function listStored(store: SessionStore | undefined): Promise<ISessionRecord[]> {
  if (!store) return [];
  const records = await store.list();
  return [...records].sort((a, b) => compareText(b.updatedAt, a.updatedAt));
}
