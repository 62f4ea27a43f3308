import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  BackgroundTasks,
  HookInventory,
  KernelInfo,
  Provider,
  SubagentLauncher,
  SystemPromptBuilder,
  describeError,
  type ICommandHostContext,
  type ICommandResult,
} from '@tessera/contracts';
import { commandModulePlugin, failure, firstWord, ok, unsupported, usage } from './define-command.js';
import type { ISystemCommand, Plugin } from './types.js';

/** `/help [command]`: the composed commands, from the registry (never a fixed list). */
export const helpCommandDefinition: ISystemCommand = {
  name: 'help',
  description: 'List the available commands, or describe one',
  argumentHint: '[command]',
  safety: 'read-only',
  lifecycle: 'inline',
  execute(context, args) {
    const commands = (context.listCommands?.() ?? []).filter((command) => command.userInvocable);
    const wanted = args.trim().replace(/^\/+/, '');
    if (wanted !== '') {
      const command = commands.find((candidate) => candidate.name === wanted);
      if (!command) return usage('help', '[command]', `No command "${wanted}".`);
      return ok(`/${command.name}${command.argumentHint ? ` ${command.argumentHint}` : ''}\n${command.description}`);
    }
    if (commands.length === 0) return ok('No commands are available.');
    const width = Math.max(...commands.map((command) => command.name.length)) + 1;
    return ok(commands.map((command) => `/${command.name.padEnd(width)} ${command.description}`).join('\n'), { data: { commands: commands.map((command) => command.name) } });
  },
};

/** `/rewind list | inspect <id> | restore <id> | code <id>`: edit checkpoints. User-invocable only. */
export const rewindCommandDefinition: ISystemCommand = {
  name: 'rewind',
  description: 'List edit checkpoints, inspect one, or restore the files to one',
  argumentHint: 'list | inspect <id> | restore <id> | code <id>',
  modelInvocable: false,
  safety: 'destructive',
  lifecycle: 'blocking',
  subcommands: [
    { name: 'list', description: 'Checkpoints of this session, one per prompt', source: 'rewind' },
    { name: 'inspect', description: 'Files a checkpoint captured and what restoring it rolls back', source: 'rewind', argumentHint: '<id>' },
    { name: 'restore', description: 'Restore files to a checkpoint', source: 'rewind', argumentHint: '<id>' },
    { name: 'code', description: 'Same as restore: code only, the conversation stays', source: 'rewind', argumentHint: '<id>' },
  ],
  async execute(context, args) {
    const [sub, id] = firstWord(args);
    if (!context.listEditCheckpoints || !context.inspectEditCheckpoint || !context.restoreEditCheckpoint) return unsupported('rewind', 'edit checkpoints (add editCheckpoints())');
    try {
      switch (sub) {
        case '':
        case 'list': {
          const checkpoints = await context.listEditCheckpoints();
          if (checkpoints.length === 0) return ok('No checkpoints yet: one is made for every prompt.');
          return ok(checkpoints.map((checkpoint) => `${checkpoint.id}  ${checkpoint.fileCount} file(s)  ${checkpoint.prompt}`).join('\n'), { data: { checkpoints: checkpoints.map((checkpoint) => checkpoint.id) } });
        }
        case 'inspect': {
          if (id === '') return usage('rewind', 'inspect <id>', 'Name a checkpoint (see /rewind list).');
          const inspection = await context.inspectEditCheckpoint(id);
          const files = inspection.files.map((file) => `  ${file.existed ? 'changed' : 'created'}  ${file.displayPath}${file.snapshotAvailable ? '' : ' (no snapshot)'}`);
          return ok([`Checkpoint ${inspection.checkpoint.id}: ${inspection.checkpoint.prompt}`, ...(files.length > 0 ? files : ['  no files captured']), `Restoring rolls back: ${inspection.rollback.join(', ')}`].join('\n'));
        }
        case 'restore':
        case 'code': {
          if (id === '') return usage('rewind', `${sub} <id>`, 'Name a checkpoint (see /rewind list).');
          const result = await context.restoreEditCheckpoint(id);
          return ok(`Restored ${result.restoredFiles.length} file(s), deleted ${result.deletedFiles.length}, removed ${result.removedCheckpoints.length} checkpoint(s).`, {
            data: { restored: result.restoredFiles, deleted: result.deletedFiles },
          });
        }
        default:
          return usage('rewind', 'list | inspect <id> | restore <id> | code <id>', `Unknown subcommand "${sub}".`);
      }
    } catch (error) {
      return failure(describeError(error));
    }
  },
};

/** `/background list | log <id> | cancel <id> | close <id>`: this session's background tasks. */
export const backgroundCommandDefinition: ISystemCommand = {
  name: 'background',
  description: 'List background tasks, read a log, cancel or close a task',
  argumentHint: 'list | log <id> | cancel <id> | close <id>',
  safety: 'write',
  lifecycle: 'inline',
  subcommands: ['list', 'log', 'cancel', 'close'].map((name) => ({ name, description: `${name} background tasks`, source: 'background' })),
  async execute(context, args) {
    const tasks = context.services.getOptional(BackgroundTasks);
    if (!tasks) return unsupported('background', 'a background runtime (add backgroundRuntime())');
    const [sub, id] = firstWord(args);
    try {
      switch (sub) {
        case '':
        case 'list': {
          if (!tasks.list) return unsupported('background', 'listing tasks');
          const list = tasks.list(context.sessionId);
          if (list.length === 0) return ok('No background tasks.');
          return ok(list.map((task) => `${task.id}  ${task.status.padEnd(9)} ${task.label ?? task.command ?? task.agentType ?? task.kind}${task.currentAction ? ` — ${task.currentAction}` : ''}`).join('\n'), {
            data: { tasks: list.map((task) => task.id) },
          });
        }
        case 'log': {
          if (id === '') return usage('background', 'log <id>', 'Name a task (see /background list).');
          if (!tasks.readOutput) return unsupported('background', 'task logs');
          const read = await tasks.readOutput(id, 0, context.sessionId);
          const lines = read.lines.slice(-200);
          return ok(lines.length === 0 ? '(no output yet)' : lines.join('\n'));
        }
        case 'cancel': {
          if (id === '') return usage('background', 'cancel <id>', 'Name a task (see /background list).');
          if (!tasks.stop) return unsupported('background', 'cancelling tasks');
          const status = await tasks.stop(id, context.sessionId);
          return ok(`Task ${id}: ${status}.`);
        }
        case 'close': {
          if (id === '') return usage('background', 'close <id>', 'Name a task (see /background list).');
          if (!tasks.close) return unsupported('background', 'closing tasks');
          await tasks.close(id, context.sessionId);
          return ok(`Task ${id} closed.`);
        }
        default:
          return usage('background', 'list | log <id> | cancel <id> | close <id>', `Unknown subcommand "${sub}".`);
      }
    } catch (error) {
      return failure(describeError(error));
    }
  },
};

/** `/hooks`: the configured hooks and the files they come from. */
export const hooksCommandDefinition: ISystemCommand = {
  name: 'hooks',
  description: 'List the configured hooks and where each comes from',
  safety: 'read-only',
  lifecycle: 'inline',
  execute(context) {
    const inventory = context.services.getOptional(HookInventory);
    if (!inventory) return ok('Hooks are not enabled in this session (no hooks plugin).');
    const entries = inventory.list();
    if (entries.length === 0) return ok('No hooks are configured.');
    return ok(entries.map((entry) => `${entry.event}${entry.matcher ? ` [${entry.matcher}]` : ''}  ${entry.type}: ${entry.summary}\n    from ${entry.file} (${entry.location})`).join('\n'), {
      data: { count: entries.length },
    });
  },
};

/** What a host offers `/mcp` (the MCP client, with the bundle-plugin work). */
export interface McpAdapter {
  servers(): Array<{ name: string; status: string; tools: number; error?: string }>;
}

/** `/mcp`: MCP servers: their status when a client runs, else what `.mcp.json` declares. */
export const mcpCommandDefinition: ISystemCommand = {
  name: 'mcp',
  description: 'List MCP servers and their status',
  safety: 'read-only',
  lifecycle: 'inline',
  execute(context) {
    const adapter = context.getCommandHostAdapters().mcp as McpAdapter | undefined;
    if (adapter) {
      const servers = adapter.servers();
      if (servers.length === 0) return ok('No MCP servers are connected.');
      return ok(servers.map((server) => `${server.name}: ${server.status}, ${server.tools} tool(s)${server.error ? ` — ${server.error}` : ''}`).join('\n'));
    }
    const file = join(context.cwd, '.mcp.json');
    if (!existsSync(file)) return ok('No MCP servers are configured (no .mcp.json in this project).');
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers?: Record<string, unknown> } & Record<string, unknown>;
      const servers = Object.keys(parsed.mcpServers ?? parsed);
      return ok(`Declared in .mcp.json (not connected in this host): ${servers.join(', ') || 'none'}.`);
    } catch (error) {
      return failure(`${file} is not valid JSON: ${describeError(error)}. Fix the file, then run /mcp again.`);
    }
  },
};

/** `/plugin`: the host opens its plugin manager. */
export const pluginCommandDefinition: ISystemCommand = {
  name: 'plugin',
  description: 'Manage bundle plugins and marketplaces',
  argumentHint: '[install|uninstall|enable|disable|marketplace] …',
  modelInvocable: false,
  // A bundle plugin's hooks, MCP servers and commands load into every session of the host.
  scope: 'host',
  safety: 'write',
  lifecycle: 'inline',
  async execute(context, args) {
    const adapter = context.getCommandHostAdapters().plugins as { run?: (args: string) => Promise<{ success: boolean; message: string }> } | undefined;
    if (args.trim() !== '' && adapter?.run) {
      const result = await adapter.run(args.trim());
      return { ...result, effects: result.success ? [{ type: 'plugin-registry-reload-requested' }] : [] };
    }
    return ok('Opening the plugin manager.', { effects: [{ type: 'plugin-tui-requested' }] });
  },
};

/** `/reload-plugins`: the host reloads bundle plugins and refreshes their commands. */
export const reloadPluginsCommandDefinition: ISystemCommand = {
  name: 'reload-plugins',
  description: 'Reload bundle plugins',
  modelInvocable: false,
  scope: 'host',
  safety: 'write',
  lifecycle: 'inline',
  execute: () => ok('Reloading plugins.', { effects: [{ type: 'plugin-registry-reload-requested' }] }),
};

/** Facts `/init` writes into a starter AGENTS.md (never invented: only what the files say). */
export function repositoryFacts(cwd: string): string[] {
  const facts: string[] = [];
  const packageFile = join(cwd, 'package.json');
  if (existsSync(packageFile)) {
    try {
      const pkg = JSON.parse(readFileSync(packageFile, 'utf8')) as { name?: string; scripts?: Record<string, string>; workspaces?: unknown; type?: string };
      facts.push(`- Node.js project${pkg.name ? ` \`${pkg.name}\`` : ''}${pkg.type === 'module' ? ' (ES modules)' : ''}${pkg.workspaces ? ', npm workspaces' : ''}.`);
      for (const script of ['build', 'test', 'lint', 'typecheck', 'dev', 'start']) {
        if (pkg.scripts?.[script]) facts.push(`- \`npm run ${script}\`: ${pkg.scripts[script]}`);
      }
    } catch {
      facts.push('- package.json is present but not valid JSON.');
    }
  }
  const markers: Array<[string, string]> = [
    ['tsconfig.json', 'TypeScript (tsconfig.json)'],
    ['Cargo.toml', 'Rust (Cargo.toml)'],
    ['go.mod', 'Go (go.mod)'],
    ['pyproject.toml', 'Python (pyproject.toml)'],
    ['requirements.txt', 'Python (requirements.txt)'],
    ['Makefile', 'a Makefile'],
    ['Dockerfile', 'a Dockerfile'],
  ];
  for (const [file, text] of markers) if (existsSync(join(cwd, file))) facts.push(`- Uses ${text}.`);
  const dirs = safeDirs(cwd).filter((name) => !name.startsWith('.') && name !== 'node_modules');
  if (dirs.length > 0) facts.push(`- Top-level folders: ${dirs.slice(0, 20).map((name) => `\`${name}/\``).join(', ')}.`);
  return facts;
}

function safeDirs(cwd: string): string[] {
  try {
    return readdirSync(cwd, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

function agentsMarkdown(cwd: string): string {
  const facts = repositoryFacts(cwd);
  return `# ${basename(cwd)}\n\nNotes for coding agents working in this repository.\n\n## Facts\n\n${facts.length > 0 ? facts.join('\n') : '- (nothing detected; describe the project here)'}\n\n## Conventions\n\n- (add the conventions agents should follow)\n`;
}

/** `/init`: writes a starter AGENTS.md from the repository's facts; asks before overwriting. */
export const initCommandDefinition: ISystemCommand = {
  name: 'init',
  description: 'Write a starter AGENTS.md from what the repository shows',
  modelInvocable: false,
  safety: 'write',
  lifecycle: 'inline',
  execute(context): ICommandResult {
    const file = join(context.cwd, 'AGENTS.md');
    const write = (): ICommandResult => {
      try {
        writeFileSync(file, agentsMarkdown(context.cwd));
        return ok(`Wrote ${file}. Review it and add your conventions.`, { data: { file } });
      } catch (error) {
        return failure(`Could not write ${file}: ${describeError(error)}.`);
      }
    };
    if (!existsSync(file)) return write();
    return {
      success: true,
      message: `${file} exists. Overwrite it?`,
      interaction: {
        prompt: { kind: 'choice', title: `Overwrite ${file}?`, choices: [{ value: 'no', label: 'Keep the file' }, { value: 'yes', label: 'Overwrite' }] },
        submit: (value) => (value === 'yes' ? write() : ok('AGENTS.md left as it was.')),
        cancel: () => ok('AGENTS.md left as it was.'),
      },
    };
  },
};

/**
 * `/doctor [--check-provider]`: the composed plugins and tokens, the provider, the context
 * files read; with `--check-provider`, one tiny model call shows whether the provider answers.
 */
export const doctorCommandDefinition: ISystemCommand = {
  name: 'doctor',
  description: 'Check the setup: plugins, provider, context files (--check-provider makes one small model call)',
  argumentHint: '[--check-provider]',
  safety: 'read-only',
  lifecycle: 'inline',
  async execute(context, args) {
    const lines: string[] = [];
    const info = context.services.getOptional(KernelInfo);
    if (info) {
      const description = info.describe();
      lines.push(`Plugins (${description.plugins.length}):`);
      for (const plugin of description.plugins) {
        const parts = [plugin.provides.length ? `provides ${plugin.provides.join(', ')}` : '', plugin.requires.length ? `requires ${plugin.requires.join(', ')}` : '', plugin.contributes.length ? `contributes ${plugin.contributes.join(', ')}` : ''].filter(Boolean);
        lines.push(`  ${plugin.name}${parts.length ? `: ${parts.join('; ')}` : ''}`);
      }
      for (const [replaced, by] of Object.entries(description.replaced)) lines.push(`  (${replaced} replaced by ${by})`);
    }
    const provider = context.services.getOptional(Provider);
    lines.push(provider ? `Provider: ${provider.name}, model ${context.getModel() ?? provider.model ?? 'default'}.` : 'Provider: none configured.');
    if (provider && args.includes('--check-provider')) lines.push(await reachability(provider, context.getModel()));
    const builder = context.services.getOptional(SystemPromptBuilder);
    if (builder) {
      try {
        const built = await builder.build({ cwd: context.cwd, services: context.services });
        lines.push(`Context files: ${built.contextFiles.length === 0 ? 'none' : built.contextFiles.map((file) => `${file.path} (${file.bytes} bytes${file.truncated ? ', cut' : ''})`).join(', ')}`);
      } catch (error) {
        lines.push(`Context files: could not be read (${describeError(error)}).`);
      }
    }
    const settings = context.getCommandHostAdapters().settings as { sources?: () => string[] } | undefined;
    const sources = settings?.sources?.();
    if (sources) lines.push(`Settings: ${sources.length === 0 ? 'defaults only' : sources.join(', ')}`);
    return ok(lines.join('\n'));
  },
};

const REACHABILITY_TIMEOUT_MS = 15_000;

/** One minimal model call, bounded in time: does the provider answer, and if not, why. */
async function reachability(provider: Provider, model: string | undefined): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REACHABILITY_TIMEOUT_MS);
  const started = Date.now();
  try {
    const reply = await provider.stream({ messages: [{ role: 'user', content: 'Reply with the word OK.' }], tools: [], signal: controller.signal, ...(model === undefined ? {} : { model }) });
    if (reply.state === 'interrupted') return `Provider check: no answer within ${REACHABILITY_TIMEOUT_MS / 1000} s.`;
    return `Provider check: answered in ${Date.now() - started} ms.`;
  } catch (error) {
    const category = (error as { category?: unknown }).category;
    return `Provider check: failed${typeof category === 'string' ? ` (${category})` : ''}: ${describeError(error)}`;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/agent [--background] [--worktree] <type> <task>`: runs a subagent and shows its answer
 * (`--background` returns at once; its progress arrives as background task events).
 */
export const agentCommandDefinition: ISystemCommand = {
  name: 'agent',
  description: 'Run a subagent on a task',
  argumentHint: '[--background] [--worktree] <agent type> <task>',
  modelInvocable: true,
  safety: 'write',
  lifecycle: 'blocking',
  async execute(context: ICommandHostContext, args) {
    const launcher = context.services.getOptional(SubagentLauncher);
    if (!launcher) return unsupported('agent', 'subagents (add subagents())');
    let rest = args.trim();
    let background = false;
    let worktree = false;
    for (;;) {
      const [word, after] = firstWord(rest);
      if (word === '--background') background = true;
      else if (word === '--worktree') worktree = true;
      else break;
      rest = after;
    }
    const [agentType, task] = firstWord(rest);
    if (agentType === '' || task === '') return usage('agent', '[--background] [--worktree] <agent type> <task>', 'Name an agent type and a task.');
    try {
      const result = await launcher.launch({
        prompt: task,
        agentType,
        parentSessionId: context.sessionId,
        cwd: context.cwd,
        signal: new AbortController().signal,
        ...(background ? { background: true } : {}),
        ...(worktree ? { isolation: 'worktree' as const } : {}),
      });
      return ok(result.text, { data: { agentId: result.agentId, agentType } });
    } catch (error) {
      return failure(`The ${agentType} agent failed: ${describeError(error)}`);
    }
  },
};

export const helpCommand = (): Plugin => commandModulePlugin('help', [helpCommandDefinition]);
export const rewindCommand = (): Plugin => commandModulePlugin('rewind', [rewindCommandDefinition]);
export const backgroundCommand = (): Plugin => commandModulePlugin('background', [backgroundCommandDefinition]);
export const hooksCommand = (): Plugin => commandModulePlugin('hooks', [hooksCommandDefinition]);
export const mcpCommand = (): Plugin => commandModulePlugin('mcp', [mcpCommandDefinition]);
export const pluginCommands = (): Plugin => commandModulePlugin('plugin', [pluginCommandDefinition, reloadPluginsCommandDefinition]);
export const initCommand = (): Plugin => commandModulePlugin('init', [initCommandDefinition]);
export const doctorCommand = (): Plugin => commandModulePlugin('doctor', [doctorCommandDefinition]);
export const agentCommand = (): Plugin =>
  commandModulePlugin('agent', [agentCommandDefinition], [{ name: 'agent', description: 'Run a subagent (a separate session with its own context) on a task and get its answer.', usage: 'Use for a self-contained task that would fill this conversation with detail: "<agent type> <task>", e.g. "Explore find where sessions are saved".', argumentHint: '<agent type> <task>', safety: 'write' }], ['agent-executor']);
