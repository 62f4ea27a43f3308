import { Compaction, Provider, TesseraError } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { CompactionOrchestrator, type CompactionOrchestratorOptions } from './compaction-orchestrator.js';

export { CompactionFailedError, CompactionOrchestrator, NothingToCompactError } from './compaction-orchestrator.js';
export type { CompactionOrchestratorOptions } from './compaction-orchestrator.js';
export { buildCompactionPrompt, COMPACTION_SYSTEM_PROMPT, middleTruncate, renderTranscript } from './compaction-prompt.js';

export type CompactionPluginOptions = Omit<CompactionOrchestratorOptions, 'provider'>;

/**
 * Provides `Compaction`: LLM summaries through the kernel's `Provider` (required).
 *
 * The factory only checks and keeps `options`. The kernel resolves `Compaction` once per
 * session it creates, and each resolution builds a (cheap, stateless) `CompactionOrchestrator`
 * on the `Provider` bound at that moment, so a `rebind(Provider)` after `createKernel`
 * reaches sessions created afterwards.
 */
export function compaction(options: CompactionPluginOptions = {}): Plugin {
  const settings = checkOptions(options);
  return definePlugin({
    name: 'compaction',
    provides: [Compaction],
    requires: [Provider],
    register({ bind }) {
      // Transient on purpose: one orchestrator per resolution, on the provider bound then.
      bind(Compaction).toResolvedValue((provider: Provider) => new CompactionOrchestrator({ ...settings, provider }), [Provider]);
    },
  });
}

function checkOptions(options: CompactionPluginOptions): CompactionPluginOptions {
  const invalid = (field: string, problem: string): TesseraError =>
    new TesseraError(`compaction: option "${field}" ${problem}.`, {
      code: 'invalid_compaction_option',
      category: 'configuration',
      recoverable: false,
      details: { field },
    });
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  for (const field of ['model', 'systemPrompt', 'compactInstructions'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'string') throw invalid(field, 'must be a string');
  }
  const { maxBlockChars } = options;
  if (maxBlockChars !== undefined && !(Number.isInteger(maxBlockChars) && maxBlockChars > 0)) throw invalid('maxBlockChars', `must be a positive integer, got ${String(maxBlockChars)}`);
  return { ...options };
}
