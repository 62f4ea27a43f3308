import { isChatEntry, type ISystemCommand, type Plugin, type SessionEndReason } from './types.js';
import { commandModulePlugin, failure, ok, unsupported, usage } from './define-command.js';

const percent = (value: number): string => `${Math.round(value * 10) / 10}%`;

/** `/clear`: empties the conversation; the host clears what it rendered (`conversation-history-cleared`). */
export const clearCommandDefinition: ISystemCommand = {
  name: 'clear',
  description: 'Clear the conversation history',
  safety: 'destructive',
  lifecycle: 'inline',
  execute(context) {
    if (!context.clearHistory) return unsupported('clear', 'clearing history');
    context.clearHistory();
    return ok('Conversation cleared.', { effects: [{ type: 'conversation-history-cleared' }] });
  },
};

/** `/compact [instructions]`: an LLM summary replaces the conversation. */
export const compactCommandDefinition: ISystemCommand = {
  name: 'compact',
  description: 'Compact the conversation into a summary (optional focus instructions)',
  argumentHint: '[instructions]',
  modelInvocable: true,
  safety: 'write',
  lifecycle: 'blocking',
  async execute(context, args) {
    if (!context.compact) return unsupported('compact', 'compaction');
    const before = context.getContextState();
    await context.compact(args.trim() === '' ? undefined : args.trim());
    const after = context.getContextState();
    const figures = before && after ? ` Context: ${before.usedTokens} → ${after.usedTokens} tokens (${percent(after.usedPercentage)} of ${after.maxTokens}).` : '';
    return ok(`Conversation compacted.${figures}`, { data: { before: before?.usedTokens ?? null, after: after?.usedTokens ?? null } });
  },
};

/** `/context [auto <percent>|auto off]`: context usage and the auto-compact threshold. */
export const contextCommandDefinition: ISystemCommand = {
  name: 'context',
  description: 'Show context window usage; `context auto <percent|off>` sets when it compacts by itself',
  argumentHint: '[auto <percent>|auto off]',
  modelInvocable: true,
  safety: 'read-only',
  lifecycle: 'inline',
  subcommands: [{ name: 'auto', description: 'Set the auto-compact threshold (percent of the window) or turn it off', source: 'context', argumentHint: '<percent>|off' }],
  execute(context, args) {
    const words = args.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) {
      const state = context.getContextState();
      const threshold = context.getAutoCompactThreshold?.();
      const auto = threshold === undefined ? '' : threshold === false ? ' Auto-compact: off.' : ` Auto-compact at ${percent(threshold * 100)}.`;
      if (!state) return ok(`No context window is tracked in this session.${auto}`);
      return ok(`Context: ${state.usedTokens} / ${state.maxTokens} tokens (${percent(state.usedPercentage)})${state.exact ? '' : ', estimated'}.${auto}`, {
        data: { usedTokens: state.usedTokens, maxTokens: state.maxTokens, usedPercentage: state.usedPercentage, autoCompactThreshold: threshold ?? null },
      });
    }
    if (words[0] !== 'auto' || words.length !== 2) return usage('context', 'auto <percent>|auto off', `Unknown arguments "${args.trim()}".`);
    if (!context.setAutoCompactThreshold) return unsupported('context', 'changing the auto-compact threshold');
    if (words[1] === 'off') {
      context.setAutoCompactThreshold(false);
      persistThreshold(context, false);
      return ok('Auto-compact turned off.');
    }
    const value = Number(words[1]!.replace(/%$/, ''));
    if (!Number.isFinite(value) || value <= 0 || value > 100) return usage('context', 'auto <percent>|auto off', `"${words[1]}" is not a percentage between 1 and 100.`);
    context.setAutoCompactThreshold(value / 100);
    persistThreshold(context, value / 100);
    return ok(`Auto-compact at ${percent(value)} of the context window.`);
  },
};

/** Saves the threshold through the host's settings adapter, when it offers one. */
function persistThreshold(context: Parameters<ISystemCommand['execute']>[0], threshold: number | false): void {
  const settings = context.getCommandHostAdapters().settings as { set?: (key: string, value: unknown) => void } | undefined;
  settings?.set?.('autoCompactThreshold', threshold);
}

/** `/cost`: session id, message count and the usage recorded so far. */
export const costCommandDefinition: ISystemCommand = {
  name: 'cost',
  description: 'Show the session id, message count and token usage',
  safety: 'read-only',
  lifecycle: 'inline',
  execute(context) {
    let prompt = 0;
    let completion = 0;
    for (const entry of context.getHistory()) {
      if (isChatEntry(entry) || entry.type !== 'usage-summary') continue;
      const usage = entry.data as { promptTokens?: number; completionTokens?: number };
      prompt += usage.promptTokens ?? 0;
      completion += usage.completionTokens ?? 0;
    }
    const messages = context.getMessageCount?.() ?? context.getHistory().filter(isChatEntry).length;
    const usageText = prompt + completion > 0 ? `Tokens: ${prompt} in, ${completion} out.` : 'No token usage reported yet.';
    return ok(`Session ${context.sessionId}: ${messages} messages. ${usageText}`, { data: { sessionId: context.sessionId, messages, promptTokens: prompt, completionTokens: completion } });
  },
};

const MAX_NAME = 100;

/** `/rename <name>`: the host renames the session (`session-renamed`). */
export const renameCommandDefinition: ISystemCommand = {
  name: 'rename',
  description: 'Rename this session',
  argumentHint: '<name>',
  safety: 'write',
  lifecycle: 'inline',
  execute(_context, args) {
    const name = args.trim().replace(/^["']|["']$/g, '').replace(/\s+/g, ' ').trim();
    if (name === '') return usage('rename', '<name>', 'A name is required.');
    if (name.length > MAX_NAME) return usage('rename', '<name>', `A name is at most ${MAX_NAME} characters.`);
    if (/[\u0000-\u001f]/.test(name)) return usage('rename', '<name>', 'A name cannot contain control characters.');
    return ok(`Session renamed to "${name}".`, { effects: [{ type: 'session-renamed', name }], data: { name } });
  },
};

/** `/resume`: the host shows its session picker. */
export const resumeCommandDefinition: ISystemCommand = {
  name: 'resume',
  description: 'Pick a stored session to continue',
  safety: 'read-only',
  lifecycle: 'inline',
  execute: () => ok('Choose a session to resume.', { effects: [{ type: 'session-picker-requested' }] }),
};

/** `/exit`: the host ends the session and exits. Never exits a process itself. */
export const exitCommandDefinition: ISystemCommand = {
  name: 'exit',
  description: 'End the session',
  userInvocable: true,
  modelInvocable: false,
  safety: 'write',
  lifecycle: 'inline',
  execute(_context, args) {
    const reason: SessionEndReason = 'prompt_input_exit';
    const message = args.trim();
    return ok('Goodbye.', { effects: [{ type: 'session-exit-requested', reason, ...(message ? { message } : {}) }] });
  },
};

/** `/reset`: the host deletes the user settings (after its own confirmation) and restarts. */
export const resetCommandDefinition: ISystemCommand = {
  name: 'reset',
  description: 'Reset settings to defaults',
  modelInvocable: false,
  // The user settings are the host's: every session in the process reads them.
  scope: 'host',
  safety: 'destructive',
  lifecycle: 'inline',
  execute(context) {
    if (context.invocation === 'model-tool') return failure('/reset can only be run by the user.');
    return ok('Settings will be reset.', { effects: [{ type: 'settings-reset-requested' }] });
  },
};

export const clearCommand = (): Plugin => commandModulePlugin('clear', [clearCommandDefinition]);
export const compactCommand = (): Plugin =>
  commandModulePlugin('compact', [compactCommandDefinition], [{ name: 'compact', description: 'Compact the conversation into a summary to free context space.', usage: 'Use when the user asks to compact or summarise the conversation so far; routine compaction happens by itself.', argumentHint: '[focus instructions]', safety: 'write' }]);
export const contextCommand = (): Plugin =>
  commandModulePlugin('context', [contextCommandDefinition], [{ name: 'context', description: 'Report how much of the context window is used.', usage: 'Use when the user asks how full the context is.', safety: 'read-only' }]);
export const costCommand = (): Plugin => commandModulePlugin('cost', [costCommandDefinition]);
export const renameCommand = (): Plugin => commandModulePlugin('rename', [renameCommandDefinition]);
export const resumeCommand = (): Plugin => commandModulePlugin('resume', [resumeCommandDefinition]);
export const exitCommand = (): Plugin => commandModulePlugin('exit', [exitCommandDefinition]);
export const resetCommand = (): Plugin => commandModulePlugin('reset', [resetCommandDefinition]);
