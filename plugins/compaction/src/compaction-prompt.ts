import type { Message, ToolResultBlock } from '@tessera/contracts';

/** The summariser's system prompt. Written for coding sessions: keep what the next turn needs. */
export const COMPACTION_SYSTEM_PROMPT = [
  'You compress the conversation between a user and a coding agent so the work can go on in a fresh, smaller context.',
  'Write a concise summary that keeps everything the agent needs to continue:',
  '- what the user asked for, their constraints and preferences;',
  '- decisions taken and why;',
  '- files, functions and commands involved (exact paths and names), and what changed;',
  '- errors met and how they were resolved, or that they are still open;',
  '- the current state of the task and the next steps.',
  'Leave out pleasantries and anything superseded. Do not invent details. Reply with the summary only.',
].join('\n');

export interface TranscriptOptions {
  /** Longer blocks keep their start and end with a marker in between. */
  maxBlockChars: number;
}

/** Keeps the first and last halves of an over-long text with a marker saying how much was cut. */
export function middleTruncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters omitted …]\n${text.slice(text.length - half)}`;
}

/**
 * The conversation as plain text. Sending a transcript rather than the raw messages keeps
 * the summary call valid whatever state the history is in (unanswered tool calls,
 * interrupted replies) and offers the model no tools to call.
 */
export function renderTranscript(messages: readonly Message[], options: TranscriptOptions): string {
  const cut = (text: string): string => middleTruncate(text, options.maxBlockChars);
  const lines: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        lines.push(`[user]\n${cut(typeof message.content === 'string' ? message.content : blocksText(message.content))}`);
        break;
      case 'assistant': {
        const parts: string[] = [];
        for (const block of message.content) {
          if (block.type === 'text') parts.push(cut(block.text));
          else if (block.type === 'tool_use') parts.push(`(calls tool ${block.name} ${cut(safeJson(block.input))})`);
        }
        const marker = message.state === 'interrupted' ? ' (interrupted)' : '';
        lines.push(`[assistant${marker}]\n${parts.join('\n')}`);
        break;
      }
      case 'tool':
        for (const result of message.content) lines.push(`[tool result: ${result.toolName}${result.isError ? ', error' : ''}]\n${cut(resultText(result))}`);
        break;
    }
  }
  return lines.join('\n\n');
}

export function buildCompactionPrompt(transcript: string, instructions: string | undefined): string {
  const extra = instructions?.trim() ? `\n\nAdditional instructions for this summary:\n${instructions.trim()}` : '';
  return `Summarize the conversation below.${extra}\n\n<conversation>\n${transcript}\n</conversation>`;
}

function blocksText(blocks: ReadonlyArray<{ type: string; text?: string }>): string {
  return blocks.map((block) => (block.type === 'text' ? block.text : `(${block.type})`)).join('\n');
}

function resultText(result: ToolResultBlock): string {
  return typeof result.content === 'string' ? result.content : blocksText(result.content);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
