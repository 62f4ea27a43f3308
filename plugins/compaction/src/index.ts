import { Compaction, TesseraError } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { CompactionOrchestrator, type CompactionOrchestratorOptions } from './compaction-orchestrator.js';

export { CompactionFailedError, CompactionOrchestrator, NothingToCompactError } from './compaction-orchestrator.js';
export type { CompactionOrchestratorOptions } from './compaction-orchestrator.js';
export { buildCompactionPrompt, COMPACTION_SYSTEM_PROMPT, middleTruncate, renderTranscript } from './compaction-prompt.js';

export type CompactionPluginOptions = Omit<CompactionOrchestratorOptions, 'provider'>;

/**
 * Provides `Compaction`: LLM summaries written by the session's own provider and model at the
 * time of the compaction, so a session that switched provider (`session.setModel`)
 * summarises with the new one. `options.model` pins a summary model instead.
 *
 * The factory only checks and keeps `options`; the orchestrator is stateless and built by
 * the container.
 */
export function compaction(options: CompactionPluginOptions = {}): Plugin {
  const settings = checkOptions(options);
  return definePlugin({
    name: 'compaction',
    provides: [Compaction],
    register({ bind }) {
      bind(Compaction)
        .toResolvedValue(() => new CompactionOrchestrator(settings))
        .inSingletonScope();
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
