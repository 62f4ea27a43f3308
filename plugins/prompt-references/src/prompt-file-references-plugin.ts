import type { IPromptFileReferenceRecord, ISession, PermissionVerdict, SessionServices } from '@tessera/contracts';
import { copyWith, PermissionPolicy } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, Stage, type Plugin } from '@tessera/kernel';
import {
  resolvePromptFileReferences,
  type PromptFileReferenceFailure,
  type PromptFileReferenceLimits,
} from './resolve-prompt-file-references.js';

export const PROMPT_FILE_REFERENCES_PLUGIN_NAME = 'prompt-file-references';

/** Options of `promptFileReferences()`: the limits of the resolver; `cwd` is each session's. */
export type PromptFileReferencesOptions = PromptFileReferenceLimits;

/**
 * Resolves `@file` references in each prompt a session submits (`userPromptSubmit`, at
 * `Stage.Default`). The files' contents go to the model only, as `additionalContext`; the
 * prompt is left as written. Once no later tap has blocked the prompt, a
 * `prompt_file_reference` event lists what was read (never the contents). Any reference that
 * cannot be included — missing, outside the workspace, denied by the Read permission rules,
 * a directory, circular, too deep, too large — blocks the prompt: `run()` rejects with
 * `PromptBlockedError` and nothing is sent.
 *
 * Each reference is judged as a `Read` of its file by the session's `PermissionPolicy`
 * (optional; without one nothing is denied), the check the Read tool's own calls get, except
 * that nobody is asked: a file an ask rule covers is included when the prompt names it and
 * refused when only a referenced file does.
 *
 * The factory only checks and keeps `options`; files are read when a prompt is submitted.
 */
export function promptFileReferences(options: PromptFileReferencesOptions = {}): Plugin {
  const limits = checkOptions(options);
  return definePlugin({
    name: PROMPT_FILE_REFERENCES_PLUGIN_NAME,
    optional: [PermissionPolicy],
    register({ hooks }) {
      // The kernel's own lookups, for sessions made outside it (a subagent's child session),
      // which have no services of their own.
      let kernelServices: Pick<SessionServices, 'getOptional'> | undefined;

      // What the resolving tap read for each session's prompt, until the recording tap
      // (an observer, after every other tap) publishes it.
      const pending = new WeakMap<ISession, { prompt: string; references: IPromptFileReferenceRecord[] }>();

      hooks.userPromptSubmit.tapPromise({ name: PROMPT_FILE_REFERENCES_PLUGIN_NAME, stage: Stage.Default }, async (context) => {
        pending.delete(context.session);
        if (context.blocked) return undefined;
        const checkRead = readCheck(context.session, kernelServices);
        const { blocks, records, failures } = await resolvePromptFileReferences(
          context.prompt,
          copyWith(limits, { cwd: context.session.cwd, ...(checkRead ? { checkRead } : {}) }),
        );
        if (failures.length > 0) {
          return {
            blocked: {
              reason: blockedReason(failures),
              source: PROMPT_FILE_REFERENCES_PLUGIN_NAME,
              details: { failures: failures.map(({ reference, kind, message, path, referencedFrom }) => ({ reference, kind, message, path, ...(referencedFrom ? { referencedFrom } : {}) })) },
            },
          };
        }
        if (records.length === 0) return undefined;
        pending.set(context.session, { prompt: context.prompt, references: records });
        return { additionalContext: [...context.additionalContext, ...blocks] };
      });

      hooks.userPromptSubmit.tap({ name: `${PROMPT_FILE_REFERENCES_PLUGIN_NAME}:record`, stage: Stage.Observe }, (context) => {
        const read = pending.get(context.session);
        pending.delete(context.session);
        if (read && !context.blocked) context.session.emit?.({ type: 'prompt_file_reference', prompt: read.prompt, references: read.references });
        return undefined;
      });

      return {
        boot({ getOptional }) {
          kernelServices = { getOptional };
        },
      };
    },
  });
}

/** A `Read` of each referenced file, judged by the session's policy at the session's current mode. */
function readCheck(session: ISession, kernel: Pick<SessionServices, 'getOptional'> | undefined): ((path: string) => Promise<PermissionVerdict>) | undefined {
  const policy = (session.services as SessionServices | undefined)?.getOptional(PermissionPolicy) ?? kernel?.getOptional(PermissionPolicy);
  if (policy === undefined) return undefined;
  return async (path) =>
    policy.evaluate({ toolName: 'Read', input: { file_path: path }, mode: session.getPermissionMode(), cwd: session.cwd, sessionId: session.sessionId });
}

/** Names every failed reference and what to do, in one message a person can act on. */
function blockedReason(failures: readonly PromptFileReferenceFailure[]): string {
  const count = failures.length === 1 ? 'A file reference' : `${failures.length} file references`;
  const lines = failures.map(({ reference, kind, message, referencedFrom }) => `- ${reference}${referencedFrom ? ` (in ${referencedFrom})` : ''} [${kind}]: ${message}`);
  return `${count} could not be included, so the prompt was not sent:\n${lines.join('\n')}\nFix or remove the reference${failures.length === 1 ? '' : 's'} and submit again. An @ that is not meant as a file can go in backticks.`;
}

function checkOptions(options: PromptFileReferencesOptions): PromptFileReferenceLimits {
  const invalid = (option: string, problem: string): PluginOptionsError =>
    new PluginOptionsError('promptFileReferences', PROMPT_FILE_REFERENCES_PLUGIN_NAME, option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  const { roots, maxFileBytes, maxTotalBytes, maxDepth } = options;
  if (roots !== undefined) {
    if (!Array.isArray(roots)) throw invalid('roots', 'must be an array of directory paths');
    roots.forEach((root, index) => {
      if (typeof root !== 'string' || root.trim() === '') throw invalid(`roots[${index}]`, 'must be a non-empty directory path');
    });
  }
  for (const [option, value] of [['maxFileBytes', maxFileBytes], ['maxTotalBytes', maxTotalBytes]] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) throw invalid(option, `must be a positive whole number of bytes (got ${String(value)})`);
  }
  if (maxDepth !== undefined && !(Number.isSafeInteger(maxDepth) && maxDepth >= 0)) throw invalid('maxDepth', `must be a whole number, 0 or more (got ${String(maxDepth)})`);
  return {
    ...(roots !== undefined ? { roots: [...roots] } : {}),
    ...(maxFileBytes !== undefined ? { maxFileBytes } : {}),
    ...(maxTotalBytes !== undefined ? { maxTotalBytes } : {}),
    ...(maxDepth !== undefined ? { maxDepth } : {}),
  };
}
