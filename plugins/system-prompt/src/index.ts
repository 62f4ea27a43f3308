import { AgentDefinitionContribution, Clock, Diagnostics, SETTING_SOURCES, isSettingSourceList, SkillSourceContribution, SystemPromptBuilder } from '@tessera/contracts';
import { PluginOptionsError, definePlugin, type Plugin } from '@tessera/kernel';
import { DefaultSystemPromptBuilder, type SystemPromptOptions } from './default-system-prompt-builder.js';

export { DefaultSystemPromptBuilder } from './default-system-prompt-builder.js';
export type { SystemPromptOptions } from './default-system-prompt-builder.js';
export { DEFAULT_BASE_PROMPT } from './base-prompt.js';
export { SECTION_ORDER } from './prompt-sections.js';
export type { SectionName } from './prompt-sections.js';
export { DEFAULT_MEMORY_CAPS, MEMORY_INDEX_PATH, readProjectMemory } from './read-project-memory.js';
export { describeProjectKind, detectProjectKind } from './project-kind.js';
export type { ProjectKind } from './project-kind.js';
export type { ProjectMemory, ProjectMemoryCaps } from './read-project-memory.js';
export { describeGitState, parseGitStatus, readGitSummary } from './git-summary.js';
export type { GitSummary } from './git-summary.js';
// The subagent prompt lives in @tessera/formats (the subagents plugin builds it too); kept here for existing imports.
export { FORK_WORKER_PROMPT_SUFFIX, SUBAGENT_PROMPT_SUFFIX, assembleSubagentPrompt } from '@tessera/formats';
export type { AssembleSubagentPromptOptions } from '@tessera/formats';

const NAME = 'system-prompt';
const FACTORY = 'systemPrompt()';

/**
 * Provides `SystemPromptBuilder`. The factory only checks its options; the builder is made
 * by the container, once per kernel, and reads everything else per `build()` call through the
 * request (its `services` give the session's skills, agents, clock and diagnostics).
 */
export function systemPrompt(options: SystemPromptOptions = {}): Plugin {
  checkOptions(options);
  const settings: SystemPromptOptions = { ...options };
  return definePlugin({
    name: NAME,
    provides: [SystemPromptBuilder],
    optional: [SkillSourceContribution, AgentDefinitionContribution, Clock, Diagnostics],
    register({ bind }) {
      bind(SystemPromptBuilder)
        .toResolvedValue(() => new DefaultSystemPromptBuilder(settings))
        .inSingletonScope();
    },
  });
}

function checkOptions(options: SystemPromptOptions): void {
  const fail = (option: string, problem: string): never => {
    throw new PluginOptionsError(FACTORY, NAME, option, problem);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'must be an object');
  const positiveInteger = (option: string, value: unknown): void => {
    if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value > 0)) {
      fail(option, `must be a positive integer, got ${String(value)}`);
    }
  };
  const section = (option: string, value: unknown, numbers: readonly string[]): void => {
    if (value === undefined || value === false) return;
    if (typeof value !== 'object' || value === null) fail(option, 'must be false or an object');
    for (const key of numbers) positiveInteger(`${option}.${key}`, (value as Record<string, unknown>)[key]);
  };
  for (const key of ['basePrompt', 'platform', 'home'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'string') fail(key, 'must be a string');
  }
  if (options.now !== undefined && typeof options.now !== 'function') fail('now', 'must be a function returning epoch milliseconds');
  for (const key of ['skills', 'agents'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'boolean') fail(key, 'must be true or false');
  }
  const sources = options.settingSources;
  if (sources !== undefined && !isSettingSourceList(sources)) {
    fail('settingSources', `must be a list of ${SETTING_SOURCES.join(', ')} (the sources whose instruction files are read)`);
  }
  section('git', options.git, ['timeoutMs']);
  section('contextFiles', options.contextFiles, ['maxFileChars', 'maxTotalChars']);
  section('memory', options.memory, ['maxLines', 'maxBytes']);
  section('tasks', options.tasks, ['maxTasks']);
  if (options.projectKind !== undefined && options.projectKind !== false) fail('projectKind', 'must be false (to leave the Project line out) or absent');
  const depth = options.contextFiles ? options.contextFiles.maxImportDepth : undefined;
  if (depth !== undefined && !(Number.isInteger(depth) && depth >= 0)) fail('contextFiles.maxImportDepth', `must be a non-negative integer, got ${String(depth)}`);
}
