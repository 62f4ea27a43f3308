import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { SessionLogData, SessionLogger } from '@tessera/contracts';
import { assertSafeTaskId } from '@tessera/plugin-background';

const SECRET_KEY = /api[-_]?key|authorization|token|secret|password/i;

function redact(value: unknown, depth = 0): unknown {
  if (depth > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // Token counts are not secrets; a key like `inputTokens` carries a number.
    out[key] = SECRET_KEY.test(key) && typeof item === 'string' ? '[REDACTED]' : redact(item, depth + 1);
  }
  return out;
}

/** Where a subagent's transcript goes: `{logsDir}/{parentSessionId}/subagents/{agentId}.jsonl`. */
export function subagentTranscriptPath(logsDir: string, parentSessionId: string, agentId: string): string {
  assertSafeTaskId(parentSessionId, 'parent session id');
  assertSafeTaskId(agentId, 'subagent id');
  return join(logsDir, parentSessionId, 'subagents', `${agentId}.jsonl`);
}

/**
 * Append-only JSONL transcript of one subagent session. Lines go through one write stream
 * (no synchronous append per streamed delta); `flush()` resolves when they are on disk.
 */
export class SubagentTranscriptLogger implements SessionLogger {
  readonly path: string;
  private readonly stream: WriteStream;
  private failed: unknown;

  constructor(logsDir: string, parentSessionId: string, agentId: string) {
    this.path = subagentTranscriptPath(logsDir, parentSessionId, agentId);
    mkdirSync(join(logsDir, parentSessionId, 'subagents'), { recursive: true });
    this.stream = createWriteStream(this.path, { flags: 'a' });
    this.stream.on('error', (error) => {
      this.failed ??= error;
    });
  }

  log(sessionId: string, event: string, data: SessionLogData): void {
    if (this.stream.writableEnded) return;
    const line = JSON.stringify({ timestamp: new Date().toISOString(), sessionId, event, ...(redact(data) as object) });
    this.stream.write(`${line}\n`);
  }

  /** Ends the stream; later `log` calls are dropped. Rejects if any write failed. */
  flush(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = () => (this.failed ? reject(this.failed) : resolve());
      if (this.stream.writableFinished || this.stream.destroyed) return done();
      this.stream.end(done);
    });
  }
}

export function createSubagentLogger(parentSessionId: string, agentId: string, logsDir: string): SubagentTranscriptLogger {
  return new SubagentTranscriptLogger(logsDir, parentSessionId, agentId);
}
