import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { externalPayloadReferenceProblem, looksLikeExternalPayloadReference } from './external-payload.js';
import type { SessionLogEntry } from './session-log-replay.js';

export type SessionReplayIssueCode =
  | 'PROVIDER_NATIVE_RAW_PAYLOAD_MISSING'
  | 'PROVIDER_RESPONSE_RAW_MISSING'
  | 'PROVIDER_RESPONSE_NORMALIZED_MISSING'
  | 'TOOL_RESULT_MISSING'
  | 'TOOL_REQUEST_MISSING'
  | 'PAYLOAD_REFERENCE_INVALID';

export interface SessionReplayIssue {
  code: SessionReplayIssueCode;
  /** Index of the event the issue is about, in the entries given. */
  eventIndex: number;
  executionId?: string;
  round?: number;
  toolCallId?: string;
  message: string;
}

export interface SessionReplayValidation {
  ok: boolean;
  issues: SessionReplayIssue[];
}

export interface ValidateOptions {
  /** The log directory: when given, referenced payload files must exist and match their hash. */
  dir?: string;
}

/**
 * Checks that a log can explain what was sent and what came back (spec:
 * validateSessionReplayLogEntries): every `provider_request` has, for its
 * executionId/round, a native raw payload of kind `response` or `stream_event`, a
 * `provider_response_raw` and a `provider_response_normalized` (rounds that logged
 * `provider_error` are exempt); tool requests and results pair up; and every external
 * payload reference is well formed (and, with `dir`, present and intact).
 */
export function validateSessionReplayLogEntries(entries: readonly SessionLogEntry[], options: ValidateOptions = {}): SessionReplayValidation {
  const issues: SessionReplayIssue[] = [];
  const requests: Array<{ key: string; eventIndex: number; executionId?: string; round?: number }> = [];
  const seen = { native: new Set<string>(), raw: new Set<string>(), normalized: new Set<string>(), failed: new Set<string>() };
  const toolRequests = new Map<string, number>();
  const toolResults = new Map<string, number>();

  entries.forEach((entry, eventIndex) => {
    const executionId = typeof entry.executionId === 'string' ? entry.executionId : undefined;
    const round = typeof entry.round === 'number' ? entry.round : undefined;
    const key = `${executionId}:${round}`;
    for (const [field, value] of Object.entries(entry)) {
      if (!looksLikeExternalPayloadReference(value)) continue;
      const problem = referenceProblem(value, entry.sessionId, options.dir);
      if (problem) issues.push({ code: 'PAYLOAD_REFERENCE_INVALID', eventIndex, executionId, round, message: `field "${field}": ${problem}` });
    }
    switch (entry.event) {
      case 'provider_request':
        requests.push({ key, eventIndex, executionId, round });
        break;
      case 'provider_native_raw_payload':
        if (entry.payloadKind === 'response' || entry.payloadKind === 'stream_event') seen.native.add(key);
        break;
      case 'provider_response_raw':
        seen.raw.add(key);
        break;
      case 'provider_response_normalized':
        seen.normalized.add(key);
        break;
      case 'provider_error':
        seen.failed.add(key);
        break;
      case 'tool_execution_request':
        if (typeof entry.toolCallId === 'string') toolRequests.set(entry.toolCallId, eventIndex);
        break;
      case 'tool_execution_result':
        if (typeof entry.toolCallId === 'string') {
          toolResults.set(entry.toolCallId, eventIndex);
          if (!toolRequests.has(entry.toolCallId)) {
            issues.push({ code: 'TOOL_REQUEST_MISSING', eventIndex, executionId, round, toolCallId: entry.toolCallId, message: `result for tool call ${entry.toolCallId} has no tool_execution_request before it` });
          }
        }
        break;
    }
  });

  for (const request of requests) {
    if (seen.failed.has(request.key)) continue;
    const where = { eventIndex: request.eventIndex, executionId: request.executionId, round: request.round };
    if (!seen.native.has(request.key)) issues.push({ code: 'PROVIDER_NATIVE_RAW_PAYLOAD_MISSING', ...where, message: 'no provider_native_raw_payload of kind response or stream_event for this request' });
    if (!seen.raw.has(request.key)) issues.push({ code: 'PROVIDER_RESPONSE_RAW_MISSING', ...where, message: 'no provider_response_raw for this request' });
    if (!seen.normalized.has(request.key)) issues.push({ code: 'PROVIDER_RESPONSE_NORMALIZED_MISSING', ...where, message: 'no provider_response_normalized for this request' });
  }
  for (const [toolCallId, eventIndex] of toolRequests) {
    if (!toolResults.has(toolCallId)) {
      const entry = entries[eventIndex]!;
      issues.push({ code: 'TOOL_RESULT_MISSING', eventIndex, executionId: entry.executionId as string | undefined, round: entry.round as number | undefined, toolCallId, message: `tool call ${toolCallId} has no tool_execution_result` });
    }
  }
  issues.sort((a, b) => a.eventIndex - b.eventIndex);
  return { ok: issues.length === 0, issues };
}

function referenceProblem(value: Record<string, unknown>, sessionId: unknown, dir: string | undefined): string | undefined {
  const problem = externalPayloadReferenceProblem(value, typeof sessionId === 'string' ? sessionId : undefined);
  if (problem || dir === undefined) return problem;
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(resolve(dir), value.relativePath as string));
  } catch (error) {
    return `payload file ${String(value.relativePath)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (bytes.length !== value.byteLength) return `payload file has ${bytes.length} bytes, the reference says ${String(value.byteLength)}`;
  if (createHash('sha256').update(bytes).digest('hex') !== value.sha256) return 'payload file does not match its sha256';
  return undefined;
}
