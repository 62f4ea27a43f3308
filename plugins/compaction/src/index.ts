import { Compaction, Provider } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { CompactionOrchestrator, type CompactionOrchestratorOptions } from './compaction-orchestrator.js';

export { CompactionFailedError, CompactionOrchestrator, NothingToCompactError } from './compaction-orchestrator.js';
export type { CompactionOrchestratorOptions } from './compaction-orchestrator.js';
export { buildCompactionPrompt, COMPACTION_SYSTEM_PROMPT, middleTruncate, renderTranscript } from './compaction-prompt.js';

export type CompactionPluginOptions = Omit<CompactionOrchestratorOptions, 'provider'>;

/** Provides `Compaction`: LLM summaries through the kernel's `Provider`. */
export function compaction(options: CompactionPluginOptions = {}): Plugin {
  return definePlugin({
    name: 'compaction',
    provides: [Compaction],
    requires: [Provider],
    register({ bind }) {
      bind(Compaction)
        .toResolvedValue((provider: Provider) => new CompactionOrchestrator({ ...options, provider }), [Provider])
        .inSingletonScope();
    },
  });
}
