export { createServerApp, UI_MESSAGE_STREAM_HEADERS, type ServerAppOptions } from './app.js';
export { hashToken, RateLimiter, TokenAuth, type TokenEntry } from './auth.js';
export { openApiDocument } from './openapi.js';
export { HubError, HubSession, SessionHub, Turn, type SessionHubOptions, type SessionSummary } from './session-hub.js';
export { DATA_BACKGROUND, DATA_CONTEXT, DATA_PERMISSION, UiStreamMapper, type PermissionAskData, type UIChunk } from './ui-stream.js';
export { startServer, type RunningServer, type StartServerOptions } from './serve.js';
export { HttpTransport, httpTransport, type HttpTransportMount, type HttpTransportOptions } from './http-transport.js';
