import type { ISystemCommand } from '@tessera/contracts';
import type { Plugin } from '@tessera/kernel';
import { commandModulePlugin, ok, unsupported, usage } from '@tessera/plugin-commands';
import { ToolBudget } from './tool-budget.js';

/**
 * `/budget`: how many tool calls this session has left. For the person at the keyboard; the
 * model asks the `tool_budget` tool instead, so the command is not model-invocable.
 */
export const budgetCommandDefinition: ISystemCommand = {
  name: 'budget',
  description: 'Show how many tool calls this session may still make',
  safety: 'read-only',
  lifecycle: 'inline',
  execute(context, args) {
    if (args.trim() !== '') return usage('budget', '', `"${args.trim()}" is not an argument of /budget.`);
    // The command reaches the plugin's service through its token, never through the plugin.
    const budget = context.services.getOptional(ToolBudget);
    if (!budget) return unsupported('budget', 'a tool budget (compose toolBudget())');
    const remaining = budget.remaining(context.sessionId);
    return ok(`${remaining} tool call${remaining === 1 ? '' : 's'} left in this session.`, { data: { remaining } });
  },
};

export const budgetCommand = (): Plugin => commandModulePlugin('budget', [budgetCommandDefinition]);
