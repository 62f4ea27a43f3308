import { describeError, SkillActivator, type ICommandResult } from '@tessera/contracts';
import { commandModulePlugin, failure, firstWord, ok, unsupported } from './define-command.js';
import type { ISystemCommand, Plugin } from './types.js';

/**
 * `/skills` lists the skills; `/skills <name> [args]` activates one (and `/<name> [args]` is
 * normalised to it). Model-invocable: the model activates a skill through
 * `tessera_command_skills` with `<name> [args]` and gets its instructions back.
 */
export const skillsCommandDefinition: ISystemCommand = {
  name: 'skills',
  description: 'List skills, or run one',
  argumentHint: '[skill] [args]',
  modelInvocable: true,
  safety: 'write',
  lifecycle: 'blocking',
  async execute(context, args): Promise<ICommandResult> {
    const [name, rest] = firstWord(args);
    if (name === '') {
      const activator = context.services.getOptional(SkillActivator);
      if (!activator) return unsupported('skills', 'skills (add skills())');
      try {
        const model = context.invocation === 'model-tool';
        const entries = (await activator.list({ sessionId: context.sessionId, cwd: context.cwd, services: context.services })).filter((entry) => (model ? entry.modelInvocable !== false : entry.userInvocable !== false));
        if (entries.length === 0) return ok('No skills found (.tessera/skills, .agents/skills, .claude/skills, .claude/commands, ~/.tessera/skills, ~/.claude/skills).');
        return ok(entries.map((entry) => `${entry.qualifiedName ?? entry.id}${entry.argumentHint ? ` ${entry.argumentHint}` : ''}: ${entry.description}`).join('\n'), {
          data: { skills: entries.map((entry) => entry.qualifiedName ?? entry.id) },
        });
      } catch (error) {
        return failure(describeError(error));
      }
    }
    if (!context.executeSkillCommandByName) return unsupported('skills', 'skill activation');
    return context.executeSkillCommandByName(name, rest, { invocation: context.invocation ?? 'user-slash' });
  },
};

export const skillsCommand = (): Plugin =>
  commandModulePlugin(
    'skills',
    [skillsCommandDefinition],
    [
      {
        name: 'skills',
        description: 'Skills: packaged instructions for recurring tasks in this project, listed in the system prompt.',
        usage: 'When the user\'s request matches a listed skill, call with "<skill name> [arguments]" and follow the instructions you get back. Mentioning a skill in prose does not run it.',
        argumentHint: '<skill> [args]',
        safety: 'write',
      },
    ],
  );
