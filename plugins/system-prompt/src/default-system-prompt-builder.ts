import { resolve } from 'node:path';
import {
  CommandContribution,
  AgentDefinitionContribution,
  Clock,
  Diagnostics,
  SkillSourceContribution,
  describeError,
  type SessionServices,
  type SettingSource,
  type SkillEntry,
  type SystemPromptBuilder,
  type SystemPromptRequest,
  type SystemPromptResult,
} from '@tessera/contracts';
import { loadContext, type LoadedContext } from '@tessera/formats';
import { projectFolderFor } from '@tessera/formats/project-folder';
import { loadTaskContext, TASKS_DIRECTORY } from '@tessera/tasks';
import { DEFAULT_BASE_PROMPT } from './base-prompt.js';
import { readGitSummary } from './git-summary.js';
import {
  agentListings,
  renderContextFiles,
  renderEnvironment,
  renderListing,
  renderProjectMemory,
  skillListings,
  type SectionName,
} from './prompt-sections.js';
import { detectProjectKind } from './project-kind.js';
import { DEFAULT_MEMORY_CAPS, readProjectMemory, type ProjectMemoryCaps } from './read-project-memory.js';

export interface SystemPromptOptions {
  /** The language the model answers in (settings.json `language`): shown in the environment section. */
  language?: string;
  /** Replaces the built-in base prompt (a request's own `basePrompt` wins over this). `''` leaves it out. */
  basePrompt?: string;
  /** Time source for the date line. Default: the session's `Clock`, else the system time. */
  now?: () => number;
  /** Shown as the platform. Default `process.platform`. */
  platform?: string;
  /** Home directory for user-level context files. Default `os.homedir()`. */
  home?: string;
  /** Git branch and dirty summary; `false` skips git. Default timeout 2,000 ms. */
  git?: false | { timeoutMs?: number };
  /**
   * Claude Code's `settingSources`: only these sources' instruction files are read — `user`:
   * `~/.claude/CLAUDE.md`, `~/.tessera/AGENTS.md`; `project`: AGENTS.md, CLAUDE.md,
   * .claude/CLAUDE.md and the project memory index (`.tessera/memory/MEMORY.md`); `local`:
   * CLAUDE.local.md. `[]`: none. Default: all of them.
   */
  settingSources?: readonly SettingSource[];
  /** AGENTS.md / CLAUDE.md / … limits (see `loadContext`); `false` skips context files. */
  contextFiles?: false | { maxFileChars?: number; maxTotalChars?: number; maxImportDepth?: number };
  /** `.tessera/memory/MEMORY.md` caps; `false` skips project memory. Default 200 lines, 25 KB. */
  memory?: false | Partial<ProjectMemoryCaps>;
  /** The `- Project:` line (languages and build tools from marker files such as package.json or Cargo.toml); `false` leaves it out. */
  projectKind?: false;
  /** Active task files (`.agents/tasks`); `false` skips them. Default at most 3 tasks. */
  tasks?: false | { maxTasks?: number };
  /**
   * Skill names and descriptions from `SkillSourceContribution`s. Default: listed when a
   * composed `skills` command is model-invocable (the model can then activate them).
   */
  skills?: boolean;
  /**
   * Agent names and descriptions from `AgentDefinitionContribution`s. Default: listed when a
   * composed command module requests the agent executor.
   */
  agents?: boolean;
}

const DEFAULT_GIT_TIMEOUT_MS = 2_000;
const SOURCE = 'system-prompt';

/**
 * Skills are listed (name and description) when the model can activate them: a composed
 * `skills` command is model-invocable. `true` lists them always, `false` never.
 */
function listsSkills(option: boolean | undefined, request: SystemPromptRequest): boolean {
  if (option !== undefined) return option;
  return request.services.getAll(CommandContribution).some((module) => module.systemCommands?.some((command) => command.name === 'skills' && command.modelInvocable === true));
}

/**
 * Agents are listed when a composed command module asks for the agent executor (the `agent`
 * command does). `true` lists them always, `false` never.
 */
function listsAgents(option: boolean | undefined, request: SystemPromptRequest): boolean {
  if (option !== undefined) return option;
  return request.services.getAll(CommandContribution).some((module) => module.sessionRequirements?.includes('agent-executor'));
}

/**
 * Builds a session's system prompt from sections in a fixed order — base, environment,
 * context files, project memory, active tasks, skills, agents, appended text — leaving empty
 * ones out. The output depends only on the request, the files and git state under `cwd`,
 * the contributions, and the date: listings are sorted by name and nothing else varies.
 */
export class DefaultSystemPromptBuilder implements SystemPromptBuilder {
  constructor(private readonly options: SystemPromptOptions = {}) {}

  async build(request: SystemPromptRequest): Promise<SystemPromptResult> {
    const { options } = this;
    const cwd = resolve(request.cwd);
    const [git, skills] = await Promise.all([
      options.git === false ? undefined : readGitSummary(cwd, options.git?.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS),
      listsSkills(options.skills, request) ? this.skillEntries(request, cwd) : [],
    ]);
    const context = options.contextFiles === false ? undefined : this.loadContextFiles(cwd, request.services);
    const project = options.projectKind === false ? undefined : detectProjectKind(cwd);
    const memory = options.memory === false || (options.settingSources !== undefined && !options.settingSources.includes('project')) ? undefined : readProjectMemory(cwd, { ...DEFAULT_MEMORY_CAPS, ...options.memory });
    const tasks =
      options.tasks === false
        ? ''
        : loadTaskContext(projectFolderFor(cwd, TASKS_DIRECTORY).root, {
            ...(git && git.branch !== 'detached HEAD' ? { currentBranch: git.branch } : {}),
            ...(options.tasks?.maxTasks === undefined ? {} : { maxTasks: options.tasks.maxTasks }),
          }).formatted;
    const agents = listsAgents(options.agents, request) ? request.services.getAll(AgentDefinitionContribution) : [];

    const sections: Array<[SectionName, string]> = [
      ['base', request.basePrompt ?? options.basePrompt ?? DEFAULT_BASE_PROMPT],
      ['environment', renderEnvironment({ cwd, platform: options.platform ?? process.platform, date: this.today(request.services), model: request.model, git, ...(project === undefined ? {} : { project }), ...(options.language === undefined ? {} : { language: options.language }) })],
      ['context-files', renderContextFiles(context?.files ?? [])],
      ['project-memory', renderProjectMemory(memory)],
      ['task-context', tasks],
      ['skills', renderListing('Skills', skillListings(skills))],
      ['agents', renderListing('Agents', agentListings(agents))],
      ['append', request.appendSystemPrompt ?? ''],
    ];
    const kept = sections.map(([name, text]) => [name, text.trim()] as const).filter(([, text]) => text !== '');

    const result: SystemPromptResult = {
      prompt: kept.map(([, text]) => text).join('\n\n'),
      sections: kept.map(([name, text]) => ({ name, chars: text.length })),
      contextFiles: (context?.files ?? []).map((file) => ({ path: file.path, bytes: Buffer.byteLength(file.content), truncated: file.truncated })),
    };
    if (context?.compactInstructions !== undefined) result.compactInstructions = context.compactInstructions;
    return result;
  }

  private loadContextFiles(cwd: string, services: SessionServices): LoadedContext {
    const limits = this.options.contextFiles || {};
    const { settingSources } = this.options;
    const loaded = loadContext({ cwd, ...limits, ...(this.options.home === undefined ? {} : { home: this.options.home }), ...(settingSources === undefined ? {} : { scopes: settingSources }) });
    const diagnostics = services.getOptional(Diagnostics);
    for (const finding of loaded.diagnostics) {
      if (finding.severity === 'info') continue;
      diagnostics?.report({ severity: finding.severity, code: 'TESSERA_CONTEXT_FILE', message: finding.message, source: SOURCE, file: finding.file, ...(finding.line === undefined ? {} : { line: finding.line }) });
    }
    return loaded;
  }

  /** Every source's skills in binding order; a failing source is reported and skipped. */
  private async skillEntries(request: SystemPromptRequest, cwd: string): Promise<SkillEntry[]> {
    const session = { sessionId: request.sessionId ?? '', cwd };
    const lists = await Promise.all(
      request.services.getAll(SkillSourceContribution).map(async (source) => {
        try {
          return [...(await source.skills(session))];
        } catch (error) {
          request.services.getOptional(Diagnostics)?.report({
            severity: 'warning',
            code: 'TESSERA_SKILL_SOURCE',
            message: `Skill source "${source.name}" failed and its skills are missing from the system prompt: ${describeError(error)}`,
            source: SOURCE,
          });
          return [];
        }
      }),
    );
    return lists.flat();
  }

  /** Local calendar date, `YYYY-MM-DD`. */
  private today(services: SessionServices): string {
    const now = this.options.now?.() ?? services.getOptional(Clock)?.now() ?? Date.now();
    const date = new Date(now);
    const pad = (value: number): string => String(value).padStart(2, '0');
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  }
}
