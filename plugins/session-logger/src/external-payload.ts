

/** What a log line holds in place of a field too large to inline (spec: IExternalPayloadReference). */
export interface IExternalPayloadReference {
  kind: 'external-payload';
  encoding: 'json';
  /** Hex SHA-256 of the payload file's bytes. */
  sha256: string;
  byteLength: number;
  /** Relative to the log directory: `{sessionId}.payloads/{sha256}.json`. */
  relativePath: string;
}

export const DEFAULT_EXTERNAL_PAYLOAD_THRESHOLD_BYTES = 32 * 1024;

export function payloadRelativePath(sessionId: string, sha256: string): string {
  return `${sessionId}.payloads/${sha256}.json`;
}

/** Anything that claims to be a reference (`kind: 'external-payload'`), valid or not. */
export function looksLikeExternalPayloadReference(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'external-payload';
}

/** Why `value` is not a well-formed reference for `sessionId`, or undefined when it is. */
export function externalPayloadReferenceProblem(value: Record<string, unknown>, sessionId: string | undefined): string | undefined {
  if (value.encoding !== 'json') return `encoding must be "json", got ${JSON.stringify(value.encoding)}`;
  if (typeof value.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(value.sha256)) return 'sha256 must be 64 lower-case hex digits';
  if (!Number.isInteger(value.byteLength) || (value.byteLength as number) < 0) return 'byteLength must be a non-negative integer';
  if (sessionId !== undefined && value.relativePath !== payloadRelativePath(sessionId, value.sha256)) {
    return `relativePath must be "${payloadRelativePath(sessionId, value.sha256)}", got ${JSON.stringify(value.relativePath)}`;
  }
  return undefined;
}

// Session ids name log and payload files: the contracts rule, shared by every store and log.
export { assertValidSessionId, InvalidSessionIdError } from '@tessera/contracts';
