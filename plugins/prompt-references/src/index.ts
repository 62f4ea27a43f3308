export {
  promptFileReferences,
  PROMPT_FILE_REFERENCES_PLUGIN_NAME,
  type PromptFileReferencesOptions,
} from './prompt-file-references-plugin.js';
export {
  resolvePromptFileReferences,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  type PromptFileReferenceFailure,
  type PromptFileReferenceFailureKind,
  type PromptFileReferenceLimits,
  type PromptFileReferenceOptions,
  type PromptFileReferenceResolution,
} from './resolve-prompt-file-references.js';
export { findReferenceTokens, type ReferenceForm, type ReferenceToken } from './reference-tokens.js';
