import type { UIMessage } from 'ai';

/** Where `tessera serve` is and the bearer token every /v1 route wants. */
export interface Connection {
  /** The server's origin, `''` for this page's own (the Vite proxy). */
  server: string;
  token: string;
}

/** A permission ask, as the server sends it in a `data-tessera-permission` part (its id is the requestId). */
export interface PermissionAsk {
  requestId: string;
  status: 'pending' | 'allowed' | 'denied' | 'timed_out' | 'cancelled';
  toolName: string;
  toolCallId: string;
  input: unknown;
  suggestedRule?: string;
}

export interface ContextUsage {
  usedTokens: number;
  maxTokens: number;
  usedPercentage: number;
}

/** Tessera's `data-*` parts, typed for `useChat`. */
export type TesseraDataParts = {
  'tessera-permission': PermissionAsk;
  'tessera-context': ContextUsage;
  'tessera-background': unknown;
  'tessera-turn': unknown;
};

export type TesseraMessage = UIMessage<unknown, TesseraDataParts>;

export type Decision = 'allow' | 'allow_always' | 'deny';

export interface SessionInfo {
  id: string;
  cwd: string;
}

export const authHeaders = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

export const chatUrl = (connection: Connection, sessionId: string): string => `${connection.server}/v1/sessions/${encodeURIComponent(sessionId)}/chat`;

async function call<T>(connection: Connection, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${connection.server}${path}`, {
    method: 'POST',
    headers: { ...authHeaders(connection.token), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const payload = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
  if (!response.ok) throw new Error(payload?.error?.message ?? `${response.status} ${response.statusText}`);
  return payload as T;
}

/** `POST /v1/sessions`: a new session in the server's default folder. */
export const createSession = (connection: Connection): Promise<SessionInfo> => call(connection, '/v1/sessions', {});

/** `POST /v1/sessions/:id/permissions/:requestId`: the answer to a pending ask. */
export const answerPermission = (connection: Connection, sessionId: string, requestId: string, decision: Decision): Promise<PermissionAsk> =>
  call(connection, `/v1/sessions/${encodeURIComponent(sessionId)}/permissions/${encodeURIComponent(requestId)}`, { decision });
