import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { useMemo, useState, type FormEvent } from 'react';
import { authHeaders, chatUrl, type Connection, type ContextUsage, type SessionInfo, type TesseraMessage } from './api';
import { MessageView } from './MessageView';

/** One Tessera session as a chat: every send is a turn, streamed back as UI message parts. */
export function Chat({ connection, session }: { connection: Connection; session: SessionInfo }) {
  const transport = useMemo(
    () => new DefaultChatTransport<TesseraMessage>({ api: chatUrl(connection, session.id), headers: authHeaders(connection.token) }),
    [connection, session.id],
  );
  const [context, setContext] = useState<ContextUsage>();
  const { messages, sendMessage, status, stop, error, clearError } = useChat<TesseraMessage>({
    id: session.id,
    transport,
    // Transient parts never land in a message: the context gauge comes through onData.
    onData: (part) => {
      if (part.type === 'data-tessera-context') setContext(part.data);
    },
  });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const text = input.trim();
    if (text === '' || busy) return;
    if (error) clearError();
    void sendMessage({ text });
    setInput('');
  };

  return (
    <main className="chat">
      <header>
        <strong>Tessera</strong>
        <span className="muted" title={session.id}>
          {session.cwd}
        </span>
        <span className="status" data-status={status}>
          {status}
          {context ? ` · context ${context.usedTokens.toLocaleString()} / ${context.maxTokens.toLocaleString()} tokens` : ''}
        </span>
      </header>
      <ol className="messages" aria-label="Conversation">
        {messages.map((message) => (
          <MessageView key={message.id} message={message} connection={connection} sessionId={session.id} />
        ))}
      </ol>
      {error && (
        <p className="error" role="alert">
          {error.message}
        </p>
      )}
      <form className="composer" onSubmit={submit}>
        <input aria-label="Prompt" value={input} onChange={(event) => setInput(event.target.value)} placeholder="Ask the agent…" autoFocus />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={input.trim() === ''}>
            Send
          </button>
        )}
      </form>
    </main>
  );
}
