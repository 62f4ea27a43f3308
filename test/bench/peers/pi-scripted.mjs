// Scripted (offline) model for pi-agent-core peers.
//
// pi-ai dispatches every model call through its API registry: a Model object
// carries an `api` id, and `streamSimple(model, ...)` (the Agent's default
// stream function) looks that id up among registered providers. We register a
// provider of our own under a private api id, so the Agent runs exactly the
// code path it would use for a real vendor, minus the network.
//
// The provider emits the same AssistantMessageEvent protocol as pi's real
// providers do (start / text_* / toolcall_* / done, with one mutable `partial`
// message shared across events) and pushes everything without artificial
// delays, so measured time is framework overhead only.

import {
  createAssistantMessageEventStream,
  registerApiProvider,
  unregisterApiProviders,
} from '@mariozechner/pi-ai';

let registrations = 0;

function zeroUsage() {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/**
 * Push one scripted assistant turn into `stream`.
 * `turn` = { deltas: string[], toolCall?: { id, name, args } }
 */
function playTurn(stream, model, turn, signal) {
  const message = {
    role: 'assistant',
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: zeroUsage(),
    stopReason: 'stop',
    timestamp: Date.now(),
  };

  if (signal?.aborted) {
    message.stopReason = 'aborted';
    message.errorMessage = 'aborted before start';
    stream.push({ type: 'error', reason: 'aborted', error: message });
    stream.end(message);
    return;
  }

  stream.push({ type: 'start', partial: message });

  if (turn.deltas.length > 0) {
    const block = { type: 'text', text: '' };
    const at = message.content.push(block) - 1;
    stream.push({ type: 'text_start', contentIndex: at, partial: message });
    for (const piece of turn.deltas) {
      block.text += piece;
      stream.push({ type: 'text_delta', contentIndex: at, delta: piece, partial: message });
    }
    stream.push({ type: 'text_end', contentIndex: at, content: block.text, partial: message });
  }

  if (turn.toolCall) {
    const { id, name, args } = turn.toolCall;
    const call = { type: 'toolCall', id, name, arguments: {} };
    const at = message.content.push(call) - 1;
    stream.push({ type: 'toolcall_start', contentIndex: at, partial: message });
    stream.push({ type: 'toolcall_delta', contentIndex: at, delta: JSON.stringify(args), partial: message });
    call.arguments = args;
    stream.push({ type: 'toolcall_end', contentIndex: at, toolCall: call, partial: message });
    message.stopReason = 'toolUse';
  }

  stream.push({ type: 'done', reason: message.stopReason, message });
  stream.end(message);
}

/**
 * Register a scripted model with pi-ai's API registry.
 *
 * `nextTurn(callIndex, context)` decides what the model "says" on each call.
 * Returns { model, calls(), dispose() }.
 */
export function registerScriptedModel(nextTurn) {
  const n = ++registrations;
  const api = `bench-scripted-${n}`;
  const sourceId = `bench-scripted-source-${n}`;
  let callIndex = 0;

  const streamFn = (model, context, options) => {
    const stream = createAssistantMessageEventStream();
    const turn = nextTurn(callIndex++, context);
    // Real providers produce events asynchronously; start on a microtask.
    queueMicrotask(() => playTurn(stream, model, turn, options?.signal));
    return stream;
  };

  registerApiProvider({ api, stream: streamFn, streamSimple: streamFn }, sourceId);

  const model = {
    id: 'scripted-1',
    name: 'Scripted bench model',
    api,
    provider: 'bench',
    baseUrl: 'http://127.0.0.1:0',
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 100_000,
  };

  return {
    model,
    calls: () => callIndex,
    dispose: () => unregisterApiProviders(sourceId),
  };
}

/** Concatenated text blocks of an assistant message. */
export function assistantText(message) {
  if (!message || !Array.isArray(message.content)) return '';
  let out = '';
  for (const block of message.content) if (block.type === 'text') out += block.text;
  return out;
}
