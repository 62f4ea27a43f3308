import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { isStreamTermination } from '@tessera/contracts';
import { HttpConnectionError, openThroughSdk } from '@tessera/provider-kit';
import { OpenAIApiError, type OpenAITransport, type OpenedChatStream } from './openai-transport.js';

type ChatParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;

/**
 * The transport of a provider given an SDK `client` (tests, a custom fetch or proxy): the call
 * goes through `client.chat.completions.create`, and what the SDK throws becomes the transport
 * errors the provider maps, so both transports fail the same way. Loaded only when a client is given.
 */
export class OpenAISdkTransport implements OpenAITransport {
  constructor(readonly client: OpenAI) {}

  async open(params: ChatParams, signal: AbortSignal): Promise<OpenedChatStream> {
    const { requestId, items } = await openThroughSdk(() => this.client.chat.completions.create(params, { signal, maxRetries: 0 }).withResponse(), fromSdkError);
    return { requestId, chunks: items };
  }
}

function fromSdkError(error: unknown, phase: 'connect' | 'stream'): unknown {
  if (error instanceof APIConnectionTimeoutError) return new HttpConnectionError(error.message, 'timeout', { cause: error });
  if (error instanceof APIConnectionError) return new HttpConnectionError(error.message, phase, { cause: error });
  if (error instanceof APIError) {
    const body = error.error as { message?: unknown } | string | undefined;
    const apiMessage = typeof body === 'string' ? body : typeof body?.message === 'string' ? body.message : error.message;
    const requestId = error.requestID ?? undefined;
    return new OpenAIApiError({
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(typeof error.code === 'string' ? { code: error.code } : {}),
      ...(typeof error.type === 'string' ? { type: error.type } : {}),
      apiMessage,
      ...(requestId === undefined ? {} : { requestId }),
      ...(error.headers === undefined ? {} : { headers: error.headers }),
    });
  }
  if (isStreamTermination(error)) return new HttpConnectionError(error.message, 'stream', { cause: error });
  return error;
}
