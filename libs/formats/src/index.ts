// Pure readers for Claude Code's on-disk formats. Each returns `{ value, diagnostics }` and
// never throws on bad content; behaviour (running commands, installing plugins) lives elsewhere.
export { readAgentDefinition, parseAgentDefinition, AGENT_NAME_PATTERN } from './agent-definition.js';
export type { AgentFileDefinition, ReadAgentOptions } from './agent-definition.js';
export { readSkillFile } from './skill-file.js';
export type { SkillDefinition } from './skill-file.js';
export { readCommandFile } from './command-file.js';
export type { CommandDefinition } from './command-file.js';
export type { PromptFrontmatter } from './skill-frontmatter.js';
export { substituteVariables, splitArguments } from './substitute-variables.js';
export type { SkillPromptContext } from './substitute-variables.js';
export { preprocessShellCommands, applyShellOutputs } from './shell-commands.js';
export type { ShellCommand } from './shell-commands.js';
export { findMarkdown, findSkills, readPluginManifest } from './plugin-manifest.js';
export type { PluginComponents, PluginHooksSource, PluginLayout, ReadPluginOptions } from './plugin-manifest.js';
export { pluginManifestSchema } from './plugin-manifest-schema.js';
export type { PluginManifest } from './plugin-manifest-schema.js';
export { expandPluginVariables } from './plugin-variables.js';
export type { PluginVariables } from './plugin-variables.js';
export { readMcpConfig, parseMcpServers } from './mcp-config.js';
export type { McpConfig, McpRemoteServer, McpServerConfig, McpStdioServer } from './mcp-config.js';
export { readMarketplace } from './marketplace.js';
export type { Marketplace, MarketplaceEntry, PluginSource } from './marketplace.js';
export { loadContext } from './load-context.js';
export { projectFolderFor, repositoryRoot } from './project-folder.js';
export type { ContextFile, LoadContextOptions, LoadedContext } from './load-context.js';
export { extractCompactInstructions } from './compact-instructions.js';
export { parseFrontmatter } from './frontmatter.js';
export type { FrontmatterDocument } from './frontmatter.js';
export { parseJsonText, lineColumnAt, readTextFile } from './read-text.js';
export { formatPath, zodDiagnostics } from './zod-diagnostics.js';
export { FORK_WORKER_PROMPT_SUFFIX, SUBAGENT_PROMPT_SUFFIX, assembleSubagentPrompt, contextForSubagent } from './subagent-prompt.js';
export type { AssembleSubagentPromptOptions } from './subagent-prompt.js';
// One hooks-config reader: the hook runner owns it; formats re-exports it under the public name.
export { parseHooksConfig, readHooksFile } from '@tessera/plugin-hooks';
