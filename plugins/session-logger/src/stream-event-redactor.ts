import { SecretTextStream } from './redact-text.js';

/** Distinct string paths followed per turn; beyond this the streams start over. */
const MAX_PATHS = 256;
const MAX_DEPTH = 32;

/**
 * Redacts the provider's native stream events (`provider_native_raw_payload` with
 * `payloadKind: 'stream_event'`) as the fragments of a text that they are: every string
 * in an event goes through the `SecretTextStream` of its path in the event
 * (`delta.text`, `delta.partial_json`, `choices.0.delta.content`, …), so a secret split
 * across two events is caught as it is in `text_delta` lines. The streams start over when
 * the round or execution changes. Strings are only redacted here; secret-named keys and
 * everything else are left to `redactSecrets`, which the line goes through afterwards.
 */
export class StreamEventRedactor {
  private readonly streams = new Map<string, SecretTextStream>();
  private round: unknown;
  private executionId: unknown;

  redact(payload: unknown, round: unknown, executionId: unknown): unknown {
    if (round !== this.round || executionId !== this.executionId) {
      this.round = round;
      this.executionId = executionId;
      this.streams.clear();
    }
    return this.walk(payload, '', 0);
  }

  private walk(value: unknown, path: string, depth: number): unknown {
    if (typeof value === 'string') return this.stream(path).push(value);
    if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH || ArrayBuffer.isView(value)) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index];
        const next = this.walk(item, `${path}.${index}`, depth + 1);
        if (next !== item && !copy) copy = value.slice(0, index);
        copy?.push(next);
      }
      return copy ?? value;
    }
    // Class instances (errors, dates, …) are left to redactSecrets.
    const prototype = Object.getPrototypeOf(value) as unknown;
    if (prototype !== Object.prototype && prototype !== null) return value;
    const record = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    const keys = Object.keys(record);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const item = record[key];
      const next = this.walk(item, path === '' ? key : `${path}.${key}`, depth + 1);
      if (next !== item && !copy) {
        copy = {};
        for (let before = 0; before < index; before++) copy[keys[before]!] = record[keys[before]!];
      }
      if (copy) copy[key] = next;
    }
    return copy ?? value;
  }

  private stream(path: string): SecretTextStream {
    let stream = this.streams.get(path);
    if (!stream) {
      if (this.streams.size >= MAX_PATHS) this.streams.clear();
      stream = new SecretTextStream();
      this.streams.set(path, stream);
    }
    return stream;
  }
}
