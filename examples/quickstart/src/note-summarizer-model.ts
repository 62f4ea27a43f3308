import type { Message, ToolMessage } from '@tessera/contracts';
import type { ScriptedRequest, ScriptedTurn } from '@tessera/plugin-provider-scripted';

const words = (text: string): string[] => text.split(/(?<= )/);

function lastToolResults(messages: readonly Message[]): ToolMessage['content'] {
  const last = messages.at(-1);
  return last?.role === 'tool' ? last.content : [];
}

/**
 * A scripted "model" that really reads what the tools return: it lists the workspace,
 * reads every note, writes SUMMARY.md from what it read, and checks the file it wrote.
 * Each step is decided from the previous tool results, like a real model would.
 */
export function noteSummarizer(delayMs: number) {
  return (request: ScriptedRequest): ScriptedTurn => {
    const results = lastToolResults(request.messages);
    switch (request.index) {
      case 0:
        return { text: words('Let me see what is in the workspace. '), delayMs, toolCalls: [{ name: 'list_files', input: {} }] };
      case 1: {
        const notes = String(results[0]?.content ?? '').split('\n').filter((name) => name.endsWith('.md'));
        return {
          text: words(`I found ${notes.length} notes; reading them. `),
          delayMs,
          toolCalls: notes.map((file_path) => ({ name: 'read_file', input: { file_path } })),
        };
      }
      case 2: {
        const lines = results.map((result) => {
          const text = String(result.content);
          const [heading = '', ...body] = text.split('\n');
          const title = heading.replace(/^#\s*/, '');
          const count = body.join(' ').split(/\s+/).filter(Boolean).length;
          return `- ${title} (${count} words)`;
        });
        const content = `# Summary\n\n${lines.join('\n')}\n`;
        return {
          text: words('Writing SUMMARY.md with one line per note. '),
          delayMs,
          toolCalls: [{ name: 'write_file', input: { file_path: 'SUMMARY.md', content } }],
        };
      }
      case 3:
        return { text: words('Checking the result. '), delayMs, toolCalls: [{ name: 'read_file', input: { file_path: 'SUMMARY.md' } }] };
      default: {
        const summary = String(results[0]?.content ?? '');
        const count = summary.split('\n').filter((line) => line.startsWith('- ')).length;
        return { text: words(`Done: SUMMARY.md lists ${count} notes.\n\n${summary}`), delayMs };
      }
    }
  };
}
