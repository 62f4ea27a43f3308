import { getToolName, isToolUIPart, type DynamicToolUIPart, type ToolUIPart } from 'ai';
import { useState } from 'react';
import { answerPermission, type Connection, type Decision, type PermissionAsk, type TesseraMessage } from './api';

type Part = TesseraMessage['parts'][number];

export function MessageView({ message, connection, sessionId }: { message: TesseraMessage; connection: Connection; sessionId: string }) {
  return (
    <li className={`message ${message.role}`} data-role={message.role}>
      {message.parts.map((part, index) => (
        <PartView key={partKey(part, index)} part={part} connection={connection} sessionId={sessionId} />
      ))}
    </li>
  );
}

function partKey(part: Part, index: number): string {
  if (isToolUIPart(part)) return part.toolCallId;
  if (part.type === 'data-tessera-permission') return part.data.requestId;
  return `${part.type}-${index}`;
}

function PartView({ part, connection, sessionId }: { part: Part; connection: Connection; sessionId: string }) {
  if (part.type === 'text') {
    return (
      <p className="text" data-part="text" data-state={part.state ?? 'done'}>
        {part.text}
      </p>
    );
  }
  if (part.type === 'reasoning') {
    return (
      <details className="reasoning">
        <summary>Thinking</summary>
        <p>{part.text}</p>
      </details>
    );
  }
  if (isToolUIPart(part)) return <ToolView part={part} />;
  if (part.type === 'data-tessera-permission') return <PermissionView ask={part.data} connection={connection} sessionId={sessionId} />;
  return null;
}

const STATE_LABELS: Record<string, string> = {
  'input-streaming': 'preparing',
  'input-available': 'running',
  'approval-requested': 'awaiting approval',
  'approval-responded': 'approved',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'denied',
};

/** The call's most telling argument (a command, a path, a pattern), for one line. */
function headline(input: unknown): string {
  if (input === null || typeof input !== 'object') return input === undefined ? '' : String(input);
  const first = Object.values(input).find((value) => typeof value === 'string');
  return typeof first === 'string' ? first : JSON.stringify(input);
}

/** Tessera's tool output is `{ summary, output?, diffFile?, diff? }`. */
function outputText(output: unknown): string | undefined {
  if (output && typeof output === 'object' && 'output' in output && typeof output.output === 'string') return output.output;
  return undefined;
}

function ToolView({ part }: { part: ToolUIPart | DynamicToolUIPart }) {
  const name = getToolName(part);
  const text = part.state === 'output-available' ? outputText(part.output) : part.state === 'output-error' ? part.errorText : undefined;
  return (
    <div className="tool" data-part="tool" data-tool-name={name} data-state={part.state}>
      <div className="tool-line">
        <span className="tool-name">{name}</span>
        <code className="tool-input">{headline(part.input)}</code>
        <span className={`badge ${part.state}`}>{STATE_LABELS[part.state] ?? part.state}</span>
      </div>
      {text !== undefined && text !== '' && (
        <details className="tool-output">
          <summary>{part.state === 'output-error' ? 'Error' : 'Output'}</summary>
          <pre>{text.length > 4000 ? `${text.slice(0, 4000)}…` : text}</pre>
        </details>
      )}
    </div>
  );
}

const STATUS_LABELS: Record<PermissionAsk['status'], string> = {
  pending: 'waiting for you',
  allowed: 'allowed',
  denied: 'denied',
  timed_out: 'timed out (denied)',
  cancelled: 'cancelled',
};

/** A permission ask: Allow / Always allow / Deny while pending, then what became of it. */
function PermissionView({ ask, connection, sessionId }: { ask: PermissionAsk; connection: Connection; sessionId: string }) {
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string>();
  const answer = async (decision: Decision): Promise<void> => {
    setSending(true);
    setFailure(undefined);
    try {
      // The server answers the stream too: this part comes back with its new status.
      await answerPermission(connection, sessionId, ask.requestId, decision);
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
      setSending(false);
    }
  };
  const pending = ask.status === 'pending';
  return (
    <div className={`permission ${ask.status}`} data-part="permission" data-request-id={ask.requestId} data-status={ask.status} data-tool-name={ask.toolName} role={pending ? 'group' : undefined} aria-label={pending ? `Permission for ${ask.toolName}` : undefined}>
      <div>
        <strong>{ask.toolName}</strong> asks for permission: <code>{headline(ask.input)}</code> — <em>{STATUS_LABELS[ask.status]}</em>
      </div>
      {pending && (
        <div className="actions">
          <button type="button" disabled={sending} onClick={() => void answer('allow')}>
            Allow
          </button>
          <button type="button" disabled={sending} onClick={() => void answer('allow_always')} title={ask.suggestedRule ? `Adds ${ask.suggestedRule} for this session` : undefined}>
            Always allow
          </button>
          <button type="button" disabled={sending} onClick={() => void answer('deny')}>
            Deny
          </button>
        </div>
      )}
      {failure && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
    </div>
  );
}
