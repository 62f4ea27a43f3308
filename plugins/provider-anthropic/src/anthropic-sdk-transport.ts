import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import { isStreamTermination } from '@tessera/contracts';
import { HttpConnectionError, openThroughSdk } from '@tessera/provider-kit';
import { AnthropicApiError, type AnthropicTransport, type OpenedMessageStream } from './anthropic-transport.js';

/**
 * The transport of a provider given an SDK `client` (tests, custom fetch or proxies): the call
 * goes through `client.messages.create`, and what the SDK throws becomes the transport errors
 * the provider maps, so both transports fail the same way. Loaded only when a client is given.
 */
export class AnthropicSdkTransport implements AnthropicTransport {
  constructor(readonly client: Anthropic) {}

  async open(params: Anthropic.MessageCreateParamsStreaming, signal: AbortSignal): Promise<OpenedMessageStream> {
    const { requestId, items } = await openThroughSdk(() => this.client.messages.create(params, { signal, maxRetries: 0 }).withResponse(), fromSdkError);
    return { requestId, events: items };
  }
}

function fromSdkError(error: unknown, phase: 'connect' | 'stream'): unknown {
  if (error instanceof APIConnectionTimeoutError) return new HttpConnectionError(error.message, 'timeout', { cause: error });
  if (error instanceof APIConnectionError) return new HttpConnectionError(error.message, phase, { cause: error });
  if (error instanceof APIError) {
    const requestId = error.requestID ?? undefined;
    const headers = error.headers;
    return new AnthropicApiError({
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(error.type ? { type: error.type } : {}),
      apiMessage: error.apiMessage ?? error.message,
      ...(requestId === undefined ? {} : { requestId }),
      ...(headers === undefined ? {} : { headers }),
    });
  }
  if (isStreamTermination(error)) return new HttpConnectionError(error.message, 'stream', { cause: error });
  return error;
}
