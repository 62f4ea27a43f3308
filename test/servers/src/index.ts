export { SseServer } from './sse-server.js';
export type { FakeFault, FakeReply, RecordedRequest, SseServerOptions } from './sse-server.js';
export { FakeAnthropicServer, anthropicErrorBody, anthropicFrames, splitInto } from './anthropic-server.js';
export type { AnthropicTurn, FakeToolCall, FakeWebSearch } from './anthropic-server.js';
export { FakeOpenAIServer, openaiErrorBody, openaiFrames } from './openai-server.js';
export type { OpenAITurn } from './openai-server.js';
export { checkAnthropicConversation, checkOpenAIConversation } from './conversation-checks.js';
export { FakeApiServer } from './fake-api-server.js';
