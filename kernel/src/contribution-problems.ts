import {
  CommandContribution,
  SessionServiceFactoryContribution,
  tokenName,
  type ICommandModule,
  type SessionServiceFactory,
} from '@tessera/contracts';
import type { Container } from 'inversify';
import type { CompositionProblem } from './errors.js';
import { commandToolProblems } from './interactive/command-tools.js';

/**
 * Contributions that cannot coexist: two executable commands with one name, two per-session
 * factories for one token. Resolving them here builds the command modules and factories
 * (values, not services with credentials), so the problem is reported at composition.
 */
export function contributionProblems(container: Container): CompositionProblem[] {
  const problems: CompositionProblem[] = [];
  const modules = container.isBound(CommandContribution) ? container.getAll<ICommandModule>(CommandContribution) : [];
  const owners = new Map<string, string[]>();
  for (const module of modules) {
    for (const command of module.systemCommands ?? []) {
      const names = owners.get(command.name) ?? [];
      names.push(module.name);
      owners.set(command.name, names);
    }
  }
  for (const [name, modulesNamed] of owners) {
    if (modulesNamed.length > 1) {
      problems.push({
        kind: 'duplicate_command',
        message: `Command "${name}" is contributed more than once (by command modules ${modulesNamed.map((module) => `"${module}"`).join(', ')}); drop one of them or rename its command.`,
        plugins: [],
        token: name,
      });
    }
  }
  for (const message of commandToolProblems(modules.flatMap((module) => [...(module.systemCommands ?? [])]))) {
    problems.push({ kind: 'invalid_command_tool', message, plugins: [] });
  }
  const factories = container.isBound(SessionServiceFactoryContribution) ? container.getAll<SessionServiceFactory>(SessionServiceFactoryContribution) : [];
  const seen = new Set<symbol>();
  for (const factory of factories) {
    if (seen.has(factory.token)) {
      problems.push({
        kind: 'duplicate_session_service',
        message: `Two per-session factories (SessionServiceFactory) make ${tokenName(factory.token)}; keep one.`,
        plugins: [],
        token: tokenName(factory.token),
      });
    }
    seen.add(factory.token);
  }
  return problems;
}
