import type { Message, ToolResultBlock } from '@tessera/contracts';
import type { ScriptedRequest, ScriptedTurn } from '@tessera/plugin-provider-scripted';

/** The model id the built-in demo model reports (`system/init`, `modelUsage`). */
export const DEMO_MODEL_ID = 'tessera-demo-model';

const MAX_NOTES = 6;

const words = (text: string): string[] => text.split(/(?<= )/);

/** The tool results since the prompt, in order. */
function resultsSincePrompt(messages: readonly Message[]): ToolResultBlock[][] {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role !== 'user') start -= 1;
  const batches: ToolResultBlock[][] = [];
  for (let index = start; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (message.role === 'tool') batches.push(message.content);
  }
  return batches;
}

function text(block: ToolResultBlock | undefined): string {
  if (!block) return '';
  return typeof block.content === 'string' ? block.content : block.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Read's output is numbered (`     1\tline`); the demo wants the plain lines. */
function plainLines(output: string): string[] {
  return output.split('\n').map((line) => line.replace(/^\s*\d+\t/, ''));
}

/**
 * The built-in demo model: a scripted "model" that works from what the tools really return,
 * for trying Tessera with no API key. Whatever the prompt, it looks around (Bash `pwd`), finds
 * the Markdown notes (Glob), reads up to six, writes SUMMARY.md from what it read, and reports.
 * Every step is decided from the previous tool results, so a denied or failed call changes
 * what it does next, as it would for a real model.
 */
export function demoModel(delayMs = 0) {
  return (request: ScriptedRequest): ScriptedTurn => {
    const batches = resultsSincePrompt(request.messages);
    const last = batches.at(-1) ?? [];
    const failed = last.find((result) => result.isError);
    if (failed && batches.length > 0 && batches.length < 3) {
      return { text: words(`(demo model) The ${failed.toolName} call did not go through: ${text(failed).split('\n')[0]} Stopping here.`), delayMs };
    }
    switch (batches.length) {
      case 0:
        return {
          text: words('(demo model: scripted, no API key in use) Let me look at the workspace first. '),
          delayMs,
          toolCalls: [{ name: 'Bash', input: { command: 'pwd', description: 'Show the working directory' } }],
        };
      case 1:
        return { text: words('Now the Markdown notes in it. '), delayMs, toolCalls: [{ name: 'Glob', input: { pattern: '**/*.md' } }] };
      case 2: {
        const files = text(last[0])
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line.endsWith('.md') && !line.endsWith('SUMMARY.md'))
          .slice(0, MAX_NOTES);
        if (files.length === 0) return { text: words('There are no Markdown notes here, so there is nothing to summarise.'), delayMs };
        return {
          text: words(`I found ${files.length} note${files.length === 1 ? '' : 's'}; reading ${files.length === 1 ? 'it' : 'them'}. `),
          delayMs,
          toolCalls: files.map((file_path) => ({ name: 'Read', input: { file_path } })),
        };
      }
      case 3: {
        // Write takes an absolute path: the folder `pwd` printed in the first step.
        const folder = text(batches[0]?.[0]).trim().split('\n')[0] ?? '';
        const target = folder.startsWith('/') ? `${folder.replace(/\/$/, '')}/SUMMARY.md` : 'SUMMARY.md';
        const lines = last
          .filter((result) => !result.isError)
          .map((result) => {
            const [heading = '', ...body] = plainLines(text(result)).filter((line) => line.trim() !== '');
            const count = body.join(' ').split(/\s+/).filter(Boolean).length;
            return `- ${heading.replace(/^#+\s*/, '')} (${count} word${count === 1 ? '' : 's'})`;
          });
        return {
          text: words('Writing SUMMARY.md with one line per note. '),
          delayMs,
          toolCalls: [{ name: 'Write', input: { file_path: target, content: `# Summary\n\n${lines.join('\n')}\n` } }],
        };
      }
      default: {
        const wrote = last[0] !== undefined && !last[0].isError;
        return { text: words(wrote ? 'Done: SUMMARY.md now lists every note I read, with its word count.' : `I could not write SUMMARY.md: ${text(last[0])}`), delayMs };
      }
    }
  };
}
