// A CI bot: answers one question about a repository with read-only tools, prints JSON.
//   ANTHROPIC_API_KEY=… node examples/embed/dist/ci-bot.js "Which test runner is used?" [repository]
import { pathToFileURL } from 'node:url';
import { createQuery } from '@tessera/kernel';
import { anthropicProvider, type AnthropicProviderOptions } from '@tessera/plugin-provider-anthropic';
import { builtinTools } from '@tessera/plugin-tools';

export interface CiBotAnswer {
  ok: boolean;
  answer: string;
  toolsUsed: string[];
  turns: number;
  error?: string;
}

export async function askRepository(question: string, repository: string, provider: AnthropicProviderOptions = {}): Promise<CiBotAnswer> {
  const plugins = [
    // Only the repository: no hosted web search, and file tools that cannot write or run anything.
    anthropicProvider({ webSearch: false, ...provider }),
    builtinTools({ exclude: ['Bash', 'BashOutput', 'KillShell', 'Write', 'Edit', 'WebFetch', 'WebSearch', 'TodoWrite'] }),
  ];
  const systemPrompt = `You are a CI bot. Answer questions about the repository in ${repository}; read files before you answer. Be brief.`;
  const toolsUsed: string[] = [];
  for await (const message of createQuery({ prompt: question, cwd: repository, plugins, systemPrompt })) {
    if (message.type === 'tool_start') toolsUsed.push(message.tool.toolName);
    if (message.type !== 'result') continue;
    const { subtype, text, turns, error } = message;
    return { ok: subtype === 'success', answer: text, toolsUsed, turns, ...(error ? { error: error.message } : {}) };
  }
  throw new Error('createQuery ended without a result');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [question = 'What does this repository do?', repository = process.cwd()] = process.argv.slice(2);
  const answer = await askRepository(question, repository);
  console.log(JSON.stringify(answer, null, 2));
  process.exitCode = answer.ok ? 0 : 1;
}
