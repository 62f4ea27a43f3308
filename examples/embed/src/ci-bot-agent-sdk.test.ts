import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { askRepositoryWithAgentSdk, loadAgentSdk } from './ci-bot-agent-sdk.js';

// The Agent SDK is installed on demand in test/agent-sdk (its own lockfile, not a workspace
// member): this suite uses it when it is there and never installs it.
const SDK_DIR = fileURLToPath(new URL('../../../test/agent-sdk/node_modules/@anthropic-ai/claude-agent-sdk', import.meta.url));
const CLI_PROGRAM = fileURLToPath(new URL('../../../presets/cli/dist/main.js', import.meta.url));
const missing = !existsSync(SDK_DIR)
  ? 'the Claude Agent SDK is not installed in test/agent-sdk (run "npm ci --omit=optional" there, or run test/agent-sdk, which installs it)'
  : !existsSync(CLI_PROGRAM)
    ? 'the tessera CLI is not built (run "npm run build")'
    : undefined;
if (missing) console.warn(`examples/embed: the Agent SDK run is skipped: ${missing}.`);

describe.skipIf(missing !== undefined)(`the CI bot through the Claude Agent SDK${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let server: FakeAnthropicServer;
  let workspace: string;
  let repository: string;

  beforeEach(async () => {
    server = new FakeAnthropicServer();
    await server.listen();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-ci-bot-sdk-')));
    repository = join(workspace, 'repository');
    mkdirSync(repository);
    mkdirSync(join(workspace, 'home'));
    writeFileSync(join(repository, 'package.json'), JSON.stringify({ name: 'demo', scripts: { test: 'vitest run' } }, null, 2));
  });

  afterEach(async () => {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('spawns the tessera bin, which reads the repository through the loopback Messages API', async () => {
    server.reply({ toolCalls: [{ id: 'toolu_read', name: 'Read', input: { file_path: join(repository, 'package.json') } }] }, { text: 'The tests run with vitest.' });
    // Hermetic: the fake API, a throw-away HOME, and no credentials or model from the shell.
    const env: Record<string, string | undefined> = { ...process.env, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.baseURL, HOME: join(workspace, 'home') };
    for (const name of ['ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_MODEL', 'XDG_CONFIG_HOME']) delete env[name];

    const answer = await askRepositoryWithAgentSdk(await loadAgentSdk(join(SDK_DIR, 'sdk.mjs')), 'Which test runner does this repository use?', repository, env);

    // The same answer, in the same shape, as ci-bot.ts gives through createQuery.
    expect(answer).toEqual({ ok: true, answer: 'The tests run with vitest.', toolsUsed: ['Read'], turns: 2 });
    expect(server.requests).toHaveLength(2);
    expect((server.bodies[0]!.tools as Array<{ name: string }>).map((tool) => tool.name).sort()).toEqual(['Glob', 'Grep', 'Read']);
    expect(JSON.stringify(server.bodies[0]!.system)).toContain('You are a CI bot.');
    expect(JSON.stringify(server.bodies[1]!.messages)).toContain('vitest run');
  }, 60_000);
});
