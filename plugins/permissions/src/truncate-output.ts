import type { ToolResult } from '@tessera/contracts';

export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;

/**
 * Keeps the start and the end of a long text and replaces the middle with a marker that
 * says how much was cut — the head holds the command's context, the tail its outcome.
 */
export function truncateMiddle(text: string, maxChars: number = DEFAULT_MAX_OUTPUT_CHARS): string {
  if (text.length <= maxChars) return text;
  const head = Math.ceil(maxChars / 2);
  const tail = maxChars - head;
  const removed = text.length - head - tail;
  return `${text.slice(0, head)}\n\n[… ${removed} characters truncated from the middle of this output …]\n\n${tail > 0 ? text.slice(-tail) : ''}`;
}

/** The result with its text output (string or text blocks) and error middle-truncated; the same object when nothing is long. */
export function truncateToolResult(result: ToolResult, maxChars: number = DEFAULT_MAX_OUTPUT_CHARS): ToolResult {
  let changed = false;
  let output = result.output;
  if (typeof output === 'string') {
    if (output.length > maxChars) {
      output = truncateMiddle(output, maxChars);
      changed = true;
    }
  } else {
    output = output.map((block) => {
      if (block.type !== 'text' || block.text.length <= maxChars) return block;
      changed = true;
      return { ...block, text: truncateMiddle(block.text, maxChars) };
    });
  }
  const error = result.error !== undefined && result.error.length > maxChars ? truncateMiddle(result.error, maxChars) : result.error;
  if (error !== result.error) changed = true;
  if (!changed) return result;
  return {
    ...result,
    output,
    ...(error === undefined ? {} : { error }),
    metadata: { ...result.metadata, truncated: true },
  };
}
