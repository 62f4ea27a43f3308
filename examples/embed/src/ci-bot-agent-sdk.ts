// The CI bot of ci-bot.ts through the Claude Agent SDK, with the tessera CLI as the "Claude
// Code" the SDK spawns (`pathToClaudeCodeExecutable`). The SDK is not a dependency of this
// workspace; in this repository it is installed on demand in test/agent-sdk:
//   (cd test/agent-sdk && npm ci --omit=optional)
//   CLAUDE_AGENT_SDK=test/agent-sdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs ANTHROPIC_API_KEY=… \
//     node examples/embed/dist/ci-bot-agent-sdk.js "Which test runner is used?" [repository]
// In a project of your own: `npm install @anthropic-ai/claude-agent-sdk` and
// `import { query } from '@anthropic-ai/claude-agent-sdk'` instead of `loadAgentSdk()`.
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CiBotAnswer } from './ci-bot.js';

/** The slice of the SDK this script uses; the full types ship with the SDK. */
export interface AgentSdk {
  query(params: { prompt: string; options: Record<string, unknown> }): AsyncIterable<AgentSdkMessage>;
}

/** The fields of the SDK's messages read here (they are the CLI's stream-json lines). */
export interface AgentSdkMessage {
  type: string;
  subtype?: string;
  is_error?: boolean;
  result?: string;
  num_turns?: number;
  errors?: string[];
  message?: { content?: unknown };
}

/** `presets/cli/bin/tessera.js`, found from `src/` and from `dist/` alike. */
export const TESSERA_BIN = fileURLToPath(new URL('../../../presets/cli/bin/tessera.js', import.meta.url));

export async function askRepositoryWithAgentSdk(sdk: AgentSdk, question: string, repository: string, env: Record<string, string | undefined> = process.env): Promise<CiBotAnswer> {
  const messages = sdk.query({
    prompt: question,
    options: {
      pathToClaudeCodeExecutable: TESSERA_BIN,
      cwd: repository,
      env,
      tools: ['Read', 'Glob', 'Grep'],
      systemPrompt: `You are a CI bot. Answer questions about the repository in ${repository}; read files before you answer. Be brief.`,
      settingSources: [],
      persistSession: false,
      maxTurns: 10,
    },
  });
  const toolsUsed: string[] = [];
  for await (const message of messages) {
    if (message.type === 'assistant' && Array.isArray(message.message?.content)) {
      for (const block of message.message.content as Array<{ type?: string; name?: string }>) {
        if (block.type === 'tool_use' && block.name) toolsUsed.push(block.name);
      }
    }
    if (message.type !== 'result') continue;
    const ok = message.subtype === 'success' && message.is_error !== true;
    const error = ok ? undefined : (message.errors?.join('; ') ?? message.result ?? message.subtype);
    return { ok, answer: ok ? (message.result ?? '') : '', toolsUsed, turns: message.num_turns ?? 0, ...(error ? { error } : {}) };
  }
  throw new Error('The Agent SDK ended without a result message');
}

/** The SDK from `CLAUDE_AGENT_SDK` (a path to its sdk.mjs), else the installed package. */
export async function loadAgentSdk(location = process.env.CLAUDE_AGENT_SDK): Promise<AgentSdk> {
  const specifier = location ? pathToFileURL(isAbsolute(location) ? location : resolve(location)).href : '@anthropic-ai/claude-agent-sdk';
  return (await import(specifier)) as AgentSdk;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [question = 'What does this repository do?', repository = process.cwd()] = process.argv.slice(2);
  const answer = await askRepositoryWithAgentSdk(await loadAgentSdk(), question, repository);
  console.log(JSON.stringify(answer, null, 2));
  process.exitCode = answer.ok ? 0 : 1;
}
