import { describeError, type ICommandResult } from '@tessera/contracts';
import { InteractiveSession, type Kernel } from '@tessera/kernel';
import { resolveModelAlias, type CliIO } from '@tessera/preset-cli';
import type { RelnotesFlags } from './args.js';

export interface PrintModeOptions {
  kernel: Kernel;
  flags: RelnotesFlags;
  io: CliIO;
  /** The repository (the preset's `cwd`). */
  cwd: string;
  /** Aborts the running prompt (Ctrl-C); the session is still saved. */
  signal?: AbortSignal;
}

/**
 * One prompt or one slash command against a composed kernel: the answer on stdout, status on
 * stderr, exit code 0 / 1. A command's `prompt-submit-requested` effect is sent as the next
 * prompt, which is how `/release-notes` reaches the model. Holds no product logic.
 */
export async function runPrintMode({ kernel, flags, io, cwd, signal }: PrintModeOptions): Promise<number> {
  const model = resolveModelAlias(flags.model);
  const interactive = new InteractiveSession({
    kernel,
    cwd,
    ...(flags.resume === undefined ? {} : { resumeSessionId: flags.resume }),
    ...(flags.continue ? { continueMostRecent: true } : {}),
    ...(model === undefined ? {} : { model }),
    ...(flags.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: flags.appendSystemPrompt }),
    sessionOptions: flags.maxTurns === undefined ? {} : { maxTurns: flags.maxTurns },
  });
  const onAbort = (): void => interactive.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (flags.verbose) {
    interactive.on('tool_start', (tool) => io.stderr(`→ ${tool.toolName}(${tool.firstArg})\n`));
    interactive.on('tool_end', (tool) => io.stderr(`  ${tool.result === 'success' ? '✓' : `✗ ${tool.errorCode ?? tool.result ?? 'failed'}`}\n`));
  }
  let code = 1;
  try {
    await interactive.whenReady();
    code = flags.prompt.startsWith('/') ? await command(interactive, flags.prompt, io) : await prompt(interactive, flags.prompt, io);
  } catch (error) {
    io.stderr(`${describeError(error)}\n`);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await interactive.shutdown().catch((error: unknown) => io.stderr(`Could not save the session: ${describeError(error)}\n`));
    // Named only when there is something to continue (not after /cost, nor a failed --resume).
    const id = await interactive.whenReady().then(() => (interactive.getMessages().length > 0 ? interactive.getSessionId() : undefined), () => undefined);
    if (id !== undefined) io.stderr(`Session ${id} (continue it with relnotes --resume ${id})\n`);
  }
  return code;
}

async function prompt(interactive: InteractiveSession, text: string, io: CliIO, displayInput?: string): Promise<number> {
  const result = await interactive.submit(text, displayInput);
  if (result === undefined) {
    io.stderr('Interrupted.\n');
    return 1;
  }
  io.stdout(`${result.response}\n`);
  return 0;
}

async function command(interactive: InteractiveSession, line: string, io: CliIO): Promise<number> {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(line.trim());
  const name = match?.[1] ?? '';
  const result: ICommandResult | null = await interactive.executeCommand(name, match?.[2] ?? '');
  if (result === null) {
    io.stderr(`Unknown command /${name}. Commands: ${interactive.listCommands().map((listed) => `/${listed.name}`).join(', ')}\n`);
    return 1;
  }
  if (!result.success) {
    io.stderr(`${result.message}\n`);
    return 1;
  }
  const prompts = (result.effects ?? []).flatMap((effect) => (effect.type === 'prompt-submit-requested' ? [effect.text] : []));
  for (const effect of result.effects ?? []) if (effect.type !== 'prompt-submit-requested') io.stderr(`(${effect.type} does nothing in print mode)\n`);
  if (prompts.length === 0) {
    io.stdout(`${result.message}\n`);
    return 0;
  }
  io.stderr(`${result.message}\n`);
  for (const text of prompts) {
    // The timeline shows the command as typed, the model gets the prompt it asked for.
    const code = await prompt(interactive, text, io, line.trim());
    if (code !== 0) return code;
  }
  return 0;
}
