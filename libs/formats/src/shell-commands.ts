/** A shell command embedded in a skill or command body, to run before the prompt is sent. */
export interface ShellCommand {
  /** The command text (without the `!` and backticks / fence). */
  command: string;
  /** `inline` for `` !`cmd` ``, `block` for a ```` ```! ```` fenced block. */
  kind: 'inline' | 'block';
  /** Offset of the whole construct in the body (inclusive) … */
  start: number;
  /** … and its end (exclusive): replace `body.slice(start, end)` with the output. */
  end: number;
  /** 1-based line and column of `start` in the body. */
  line: number;
  column: number;
}

const FENCE_OPEN = /^(`{3,})![ \t]*\r?$/;

/**
 * Finds `` !`cmd` `` (only at the start of a line or after whitespace, as in Claude Code) and
 * ```` ```! ```` fenced blocks, in order. Extraction only: running them (and the permission
 * check that must precede it) belongs to the skill runner.
 */
export function preprocessShellCommands(body: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const lines = body.split('\n');
  let offset = 0;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const open = FENCE_OPEN.exec(line);
    if (open) {
      const fence = open[1]!;
      let end = index + 1;
      while (end < lines.length && !lines[end]!.trimEnd().startsWith(fence)) end += 1;
      const closed = end < lines.length;
      const inner = lines.slice(index + 1, end).join('\n');
      const lastLine = closed ? end : lines.length - 1;
      let endOffset = offset;
      for (let walk = index; walk <= lastLine; walk += 1) endOffset += lines[walk]!.length + 1;
      endOffset = Math.min(endOffset - 1, body.length);
      commands.push({ command: inner.replace(/\r$/, '').trim(), kind: 'block', start: offset, end: endOffset, line: index + 1, column: 1 });
      for (let walk = index; walk <= lastLine; walk += 1) offset += lines[walk]!.length + 1;
      index = lastLine;
      continue;
    }
    for (const match of line.matchAll(/(^|\s)!`([^`\n]+)`/g)) {
      const column = match.index + match[1]!.length;
      commands.push({
        command: match[2]!.trim(),
        kind: 'inline',
        start: offset + column,
        end: offset + column + match[0].length - match[1]!.length,
        line: index + 1,
        column: column + 1,
      });
    }
    offset += line.length + 1;
  }
  return commands;
}

/** Replaces each extracted command with its output (same order as `commands`). */
export function applyShellOutputs(body: string, commands: readonly ShellCommand[], outputs: readonly string[]): string {
  let result = '';
  let cursor = 0;
  commands.forEach((command, index) => {
    result += body.slice(cursor, command.start) + (outputs[index] ?? '');
    cursor = command.end;
  });
  return result + body.slice(cursor);
}
