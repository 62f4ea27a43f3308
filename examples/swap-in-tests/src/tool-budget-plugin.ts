import { ToolContribution } from '@tessera/contracts';
import { definePlugin, defineTool, PluginOptionsError, Stage, type Plugin } from '@tessera/kernel';
import { z } from 'zod';
import { CountingToolBudget, ToolBudget } from './tool-budget.js';

export interface ToolBudgetOptions {
  /** Tool calls each session may make. `tool_budget` itself is free. */
  maxCalls: number;
  /** Told at kernel shutdown how many calls were refused. */
  onReport?: (report: { refusedCalls: number }) => void;
}

const NAME = 'tool-budget';

/** A tool the model asks how many calls it has left. */
const budgetTool = defineTool({
  name: 'tool_budget',
  description: 'How many tool calls this session may still make',
  inputSchema: z.object({}),
  execute: (_input, context) => {
    const budget = context.services?.get(ToolBudget);
    if (!budget) return { success: false, output: 'No tool budget in this session.' };
    return { success: true, output: `${budget.remaining(context.sessionId)} tool calls left.` };
  },
});

/**
 * Provides `ToolBudget`, contributes the `tool_budget` tool, and refuses a session's tool calls
 * once its budget is spent.
 */
export function toolBudget(options: ToolBudgetOptions): Plugin {
  // A factory checks and keeps its options; the container builds the service.
  if (!Number.isInteger(options.maxCalls) || options.maxCalls < 0) {
    throw new PluginOptionsError('toolBudget', NAME, 'maxCalls', 'must be a whole number, 0 or more');
  }
  return definePlugin({
    name: NAME,
    provides: [ToolBudget],
    contributes: [ToolContribution],
    register({ bind, hooks }) {
      bind(ToolBudget).toResolvedValue(() => new CountingToolBudget(options.maxCalls)).inSingletonScope();
      bind(ToolContribution).toConstantValue(budgetTool);

      hooks.preToolUse.tapPromise({ name: NAME, stage: Stage.Guard }, async ({ session, toolName }) => {
        if (toolName === budgetTool.name) return undefined;
        // Ask the session, not a captured instance: a test may rebind or decorate ToolBudget.
        const budget = session.services.get(ToolBudget);
        if (budget.spend(session.sessionId)) return undefined;
        return { decision: 'deny', reason: `the tool budget of ${options.maxCalls} calls is spent` };
      });
      hooks.sessionEnd.tap({ name: `${NAME}:release`, stage: Stage.Observe }, ({ session }) => {
        session.services.get(ToolBudget).release(session.sessionId);
      });

      // This kernel's state lives in the activation's closure, so one plugin value composed
      // into two kernels keeps two budgets.
      let budget: ToolBudget | undefined;
      return {
        boot(context) {
          budget = context.get(ToolBudget);
        },
        shutdown() {
          if (budget) options.onReport?.({ refusedCalls: budget.refusedCalls });
        },
      };
    },
  });
}
