import { useEffect, useRef, useState, type FormEvent } from 'react';
import { createSession, type Connection, type SessionInfo } from './api';
import { Chat } from './Chat';

/** `?server=` and `?token=` prefill the form; a token in the address connects at once (and is removed from it). */
function initialConnection(): Connection {
  const params = new URLSearchParams(window.location.search);
  const token = params.get('token') ?? '';
  if (token !== '') {
    params.delete('token');
    const query = params.toString();
    window.history.replaceState(null, '', `${window.location.pathname}${query ? `?${query}` : ''}`);
  }
  return { server: (params.get('server') ?? '').replace(/\/+$/, ''), token };
}

export function App() {
  const [initial] = useState(initialConnection);
  const [server, setServer] = useState(initial.server);
  const [token, setToken] = useState(initial.token);
  const [session, setSession] = useState<{ connection: Connection; info: SessionInfo }>();
  const [error, setError] = useState<string>();
  const [connecting, setConnecting] = useState(false);

  const connect = async (connection: Connection): Promise<void> => {
    setConnecting(true);
    setError(undefined);
    try {
      setSession({ connection, info: await createSession(connection) });
    } catch (failure) {
      setError(`Could not create a session: ${failure instanceof Error ? failure.message : String(failure)}`);
    } finally {
      setConnecting(false);
    }
  };

  // Once, even when StrictMode runs effects twice in development.
  const autoConnected = useRef(false);
  useEffect(() => {
    if (initial.token === '' || autoConnected.current) return;
    autoConnected.current = true;
    void connect(initial);
  }, [initial]);

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    void connect({ server: server.trim().replace(/\/+$/, ''), token: token.trim() });
  };

  if (session) return <Chat connection={session.connection} session={session.info} />;
  return (
    <main className="connect">
      <h1>Tessera web chat</h1>
      <p>
        Talks to <code>tessera serve</code> with the AI SDK&apos;s <code>useChat</code>.
      </p>
      <form onSubmit={submit}>
        <label>
          Server
          <input value={server} onChange={(event) => setServer(event.target.value)} placeholder="this page's origin (the dev proxy)" />
        </label>
        <label>
          Token
          <input type="password" value={token} onChange={(event) => setToken(event.target.value)} placeholder="TESSERA_SERVER_TOKEN" autoComplete="off" required />
        </label>
        <button type="submit" disabled={connecting || token.trim() === ''}>
          {connecting ? 'Connecting…' : 'Start a session'}
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}
