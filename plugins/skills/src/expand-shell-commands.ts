import { PermissionPolicy, SandboxPaths, describeError, type Diagnostic, type PermissionMode, type SessionServices } from '@tessera/contracts';
import { applyShellOutputs, preprocessShellCommands } from '@tessera/formats';
import { runShellCommand } from './run-shell-command.js';

export interface ShellExpansionContext {
  readonly file: string;
  /** 1-based file line of the body's first line, to locate findings. */
  readonly bodyLine: number;
  readonly cwd: string;
  readonly sessionId: string;
  readonly services: SessionServices;
  readonly mode: PermissionMode;
  readonly timeoutMs: number;
  readonly maxOutputChars: number;
  readonly signal?: AbortSignal;
}

export interface ShellExpansion {
  readonly text: string;
  readonly diagnostics: Diagnostic[];
}

/**
 * Replaces each `` !`cmd` `` and ```` ```! ```` block with the command's output, one after
 * another. Each command is first judged as a `Bash` call with `{ command }` by the session's
 * `PermissionPolicy`, exactly as the model's own Bash call would be; only `auto` runs it. A
 * command that is denied or would need approval never runs (nobody is asked in the middle of
 * rendering a prompt): its place says why, and a located warning says the same. Without a
 * bound policy nothing runs, and nothing runs in a session whose tools work in a sandbox
 * (`SandboxPaths`): these commands run on this host, which that session's Bash cannot reach.
 */
export async function expandShellCommands(body: string, context: ShellExpansionContext): Promise<ShellExpansion> {
  const commands = preprocessShellCommands(body);
  if (commands.length === 0) return { text: body, diagnostics: [] };
  const policy = context.services.getOptional(PermissionPolicy);
  const sandboxed = context.services.getOptional(SandboxPaths) !== undefined;
  const diagnostics: Diagnostic[] = [];
  const outputs: string[] = [];
  for (const command of commands) {
    const where = { file: context.file, line: context.bodyLine + command.line - 1, column: command.column };
    const refuse = (why: string): void => {
      outputs.push(`[shell command not run: \`${command.command}\` — ${why}]`);
      diagnostics.push({ severity: 'warning', ...where, message: `Shell command \`${command.command}\` was not run: ${why}` });
    };
    if (sandboxed) {
      refuse("this session's tools run in a sandbox and skill shell commands would run on the host; run the command with the Bash tool instead");
      continue;
    }
    if (policy === undefined) {
      refuse('no PermissionPolicy is bound, so skill shell commands are off; compose the permissions plugin and allow the command (e.g. `Bash(git status:*)`)');
      continue;
    }
    let verdict;
    try {
      verdict = await policy.evaluate({ toolName: 'Bash', input: { command: command.command }, mode: context.mode, cwd: context.cwd, sessionId: context.sessionId });
    } catch (error) {
      refuse(`the permission check failed (${describeError(error)})`);
      continue;
    }
    const rule = verdict.rule === undefined ? '' : ` by rule \`${verdict.rule}\``;
    if (verdict.decision === 'deny') {
      refuse(`denied${rule}${verdict.reason ? ` (${verdict.reason})` : ''}`);
      continue;
    }
    if (verdict.decision !== 'auto') {
      refuse(`it needs approval${rule}, and skill shell commands run only when a permission rule allows them; add an allow rule such as \`Bash(${command.command.split(/\s+/)[0]}:*)\``);
      continue;
    }
    if (context.signal?.aborted) {
      refuse('the activation was aborted');
      continue;
    }
    const result = await runShellCommand(command.command, {
      cwd: context.cwd,
      timeoutMs: context.timeoutMs,
      maxOutputChars: context.maxOutputChars,
      env: { ...process.env, CLAUDE_PROJECT_DIR: context.cwd, TESSERA_PROJECT_DIR: context.cwd },
      ...(context.signal ? { signal: context.signal } : {}),
    });
    let text = result.output;
    if (result.truncated) text += `\n[output truncated at ${context.maxOutputChars} characters]`;
    if (result.timedOut || result.aborted || result.exitCode !== 0) {
      const why = result.timedOut ? `timed out after ${context.timeoutMs} ms` : result.aborted ? 'was aborted' : `exited with ${result.exitCode === null ? 'no exit code' : `code ${result.exitCode}`}`;
      text += `${text === '' ? '' : '\n'}[shell command \`${command.command}\` ${why}]`;
      diagnostics.push({ severity: 'warning', ...where, message: `Shell command \`${command.command}\` ${why}.` });
    }
    outputs.push(text);
  }
  return { text: applyShellOutputs(body, commands, outputs), diagnostics };
}
