import {
  describeError,
  messageText,
  toolUses,
  type AssistantMessage,
  type ImageBlock,
  type TextBlock,
  type ToolResultBlock,
  type UserMessage,
  type UserPromptSubmitContext,
} from '@tessera/contracts';
import { PromptBlockedError } from './errors.js';
import { isTapped } from './hooks.js';
import { ProviderRound } from './provider-round.js';
import type { Session } from './session.js';
import { executeToolBatch } from './tool-batch.js';

const DEFAULT_MAX_STOP_CONTINUATIONS = 8;

/**
 * One `run()`: prompt hooks, optional auto-compaction, then rounds of model call and tool
 * batch until the model stops calling tools, `maxTurns` is reached, or the run is aborted.
 * On abort it returns normally (the caller turns that into an AbortError); other failures
 * reject with history intact up to the failure.
 */
export async function runTurn(
  session: Session,
  message: string,
  signal: AbortSignal,
  rawPrompt?: string,
  content?: ReadonlyArray<TextBlock | ImageBlock>,
): Promise<string> {
  const { hooks, options } = session;

  let prompt = message;
  let additionalContext: readonly string[] = [];
  if (isTapped(hooks.userPromptSubmit)) {
    const context = (await hooks.userPromptSubmit.promise({
      session,
      prompt: message,
      ...(rawPrompt === undefined ? {} : { rawPrompt }),
      additionalContext: [],
    })) as UserPromptSubmitContext;
    if (context.blocked) throw new PromptBlockedError(context.blocked.reason, context.blocked);
    prompt = context.prompt;
    additionalContext = context.additionalContext;
  }
  if (signal.aborted) return '';

  await autoCompact(session, signal);
  if (signal.aborted) return '';

  session.appendMessage(userMessage(prompt, additionalContext, content === undefined ? undefined : promptBlocks(content, prompt === message ? undefined : prompt)));
  if (options.sessionLogger) session.log('pre_run', {
    provider: session.getProvider().name,
    input: prompt,
    historyLength: session.getHistory().length,
  });

  const provider = new ProviderRound(session, signal);
  session.lastRounds = 0;

  const maxTurns = options.maxTurns && options.maxTurns > 0 ? options.maxTurns : Infinity;
  const maxContinuations = options.maxStopContinuations ?? DEFAULT_MAX_STOP_CONTINUATIONS;
  let continuations = 0;
  let lastText = '';

  try {
    for (;;) {
      if (provider.round >= maxTurns) {
        session.log('max_turns_reached', { maxTurns, rounds: provider.round });
        return lastText;
      }
      provider.round += 1;
      // No await (and no microtask) unless a tool source has something new.
      if (session.toolSourcesStale) await session.refreshTools();
      if (session.contextWindow) session.emitContextUpdate(session.contextWindow.updateFromHistory(session.getHistory()));

      const startedAt = session.clock.now();
      let reply: AssistantMessage;
      try {
        reply = await provider.stream();
      } catch (error) {
        const partial = provider.partialMessage();
        if (partial.content.length > 0) session.appendMessage(partial);
        throw error;
      }
      const calls = toolUses(reply);
      session.appendMessage(reply);
      session.lastRounds = provider.round;
      if (session.hasListeners()) session.emit({ type: 'assistant_message', round: provider.round, message: reply });
      if (reply.state === 'interrupted' || signal.aborted) {
        // An interrupted reply may still carry tool calls; each gets its result.
        if (calls.length > 0) {
          session.appendMessage({ role: 'tool', content: calls.map((call) => skippedResult(call, 'the turn was aborted')) });
        }
        return messageText(reply);
      }
      if (isTapped(hooks.afterProviderResponse)) {
        try {
          await hooks.afterProviderResponse.promise({
            session,
            round: provider.round,
            message: reply,
            durationMs: session.clock.now() - startedAt,
          });
        } catch (error) {
          // The reply is in history: its tool calls still get results before the turn fails.
          const reason = `the afterProviderResponse hook failed: ${describeError(error)}`;
          if (calls.length > 0) session.appendMessage({ role: 'tool', content: calls.map((call) => skippedResult(call, reason)) });
          throw error;
        }
      }
      if (session.contextWindow) session.emitContextUpdate(session.contextWindow.updateFromHistory(session.getHistory()));
      lastText = messageText(reply);

      if (calls.length === 0) {
        if (!isTapped(hooks.stop)) return finish(session, lastText);
        const decision = await hooks.stop.promise({
          session,
          response: lastText,
          lastAssistantMessage: reply,
          stopHookActive: continuations > 0,
        });
        if (!decision || continuations >= maxContinuations) return finish(session, lastText);
        continuations += 1;
        session.appendMessage({ role: 'user', content: decision.reason });
        continue;
      }

      await executeToolBatch(session, calls, provider.round, signal);
      if (signal.aborted) return lastText;
    }
  } finally {
    provider.release();
  }
}
function finish(session: Session, text: string): string {
  if (session.options.sessionLogger) session.log('assistant', { content: text, historyLength: session.getHistory().length });
  return text;
}

/** The turn's user message: hook context first (a reminder block), then the prompt as text or as its blocks. */
function userMessage(prompt: string, additionalContext: readonly string[], blocks: Array<TextBlock | ImageBlock> | undefined): UserMessage {
  if (additionalContext.length === 0) return { role: 'user', content: blocks ?? prompt };
  const reminder: TextBlock = {
    type: 'text',
    text: `<system-reminder>\n${additionalContext.join('\n\n')}\n</system-reminder>`,
  };
  return { role: 'user', content: [reminder, ...(blocks ?? [{ type: 'text', text: prompt }])] };
}

/**
 * `RunOptions.content` as the message's blocks: as given, or, when a `userPromptSubmit` tap
 * rewrote the prompt (`rewritten`), its images and then the rewritten text. Empty text blocks
 * are left out (the APIs refuse them; an image-only prompt has empty text).
 */
function promptBlocks(content: ReadonlyArray<TextBlock | ImageBlock>, rewritten: string | undefined): Array<TextBlock | ImageBlock> | undefined {
  const blocks: Array<TextBlock | ImageBlock> = [];
  for (const block of content) {
    if (block.type === 'image') blocks.push(block);
    else if (rewritten === undefined && block.text !== '') blocks.push(block);
  }
  if (rewritten !== undefined && rewritten !== '') blocks.push({ type: 'text', text: rewritten });
  // Nothing left (empty text, no image): the prompt as text, as without `content`.
  return blocks.length === 0 ? undefined : blocks;
}

function skippedResult(call: { id: string; name: string }, reason: string): ToolResultBlock {
  return {
    type: 'tool_result',
    toolUseId: call.id,
    toolName: call.name,
    content: `Tool call "${call.name}" was not run: ${reason}.`,
    isError: true,
  };
}

async function autoCompact(session: Session, signal: AbortSignal): Promise<void> {
  const { contextWindow } = session;
  const { compaction } = session.options;
  const threshold = session.getAutoCompactThreshold();
  if (!contextWindow || !compaction || threshold === false) return;
  if (!contextWindow.shouldAutoCompact(threshold)) return;
  try {
    await session.compact(undefined, 'auto', signal);
  } catch (error) {
    if (signal.aborted) return;
    // A failed automatic compaction must not cost the user their turn: history is intact.
    session.log('error', { phase: 'autoCompact', error: describeError(error) });
  }
}
