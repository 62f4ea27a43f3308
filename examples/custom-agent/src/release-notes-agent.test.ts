import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PermissionPolicy, type Message, type ToolResultBlock } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { cliPreset, type CliIO } from '@tessera/preset-cli';
import { ScriptedProvider, scriptedProvider, type ScriptedRequest, type ScriptedTurn } from '@tessera/plugin-provider-scripted';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseRelnotesArgs } from './args.js';
import { gitLog } from './git-log-tool.js';
import { runPrintMode } from './print-mode.js';
import { releaseNotesPreset } from './release-notes-preset.js';
import { relnotesPresetOptions } from './relnotes-options.js';
import { SqliteSessionStore } from './sqlite-session-store.js';
import { makeRepository } from './test-repository.test-helper.js';

// relnotes end to end in one process: the real preset over a real git repository and a real
// SQLite file, with only the model scripted (it takes the place of the profile's provider).

const NOTES = 'Release v1.1 adds JSON output.\n\n### Breaking changes\n- Reject empty ranges (b2)\n\n### Features\n- Add --json output (a1)';

let repository: string;
let home: string;

beforeEach(() => {
  repository = makeRepository();
  home = mkdtempSync(join(tmpdir(), 'relnotes-home-'));
});

/** Calls GitLog on the range the prompt names, then answers with NOTES. */
function draftingModel(range = 'v1.0..HEAD'): (request: ScriptedRequest) => ScriptedTurn {
  return (request) => (request.index === 0 ? { toolCalls: [{ id: 'call_log', name: 'GitLog', input: { range } }] } : { text: NOTES });
}

async function relnotes(argv: string[], provider: ScriptedProvider): Promise<{ code: number; stdout: string; stderr: string; sessionId: string | undefined }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: repository, home, env: {} };
  const flags = parseRelnotesArgs(argv);
  const options = relnotesPresetOptions(flags, io, { kind: 'demo' });
  const kernel = await createKernel({ plugins: releaseNotesPreset({ ...options, sessionLog: false, mcp: false, replace: [scriptedProvider(provider)] }) });
  try {
    const code = await runPrintMode({ kernel, flags, io, cwd: options.cwd });
    return { code, stdout, stderr, sessionId: /Session (\S+)/.exec(stderr)?.[1] };
  } finally {
    await kernel.shutdown();
  }
}

const toolResults = (messages: readonly Message[]): ToolResultBlock[] =>
  messages.flatMap((message) => (message.role === 'tool' ? message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result') : []));

const text = (result: ToolResultBlock): string => (typeof result.content === 'string' ? result.content : result.content.map((block) => ('text' in block ? block.text : '')).join(''));

describe('relnotes', () => {
  it('reads the range with GitLog (allowed by the shipped rule) and keeps the session in SQLite', async () => {
    const provider = new ScriptedProvider({ turns: draftingModel() });
    const run = await relnotes(['-p', 'Draft notes for v1.0..HEAD'], provider);
    expect(run).toMatchObject({ code: 0, stdout: `${NOTES}\n` });

    // The style guide is in the system prompt; GitLog is offered and ran without an approval.
    expect(provider.requests[0]!.system).toContain('## Release notes style guide');
    expect(provider.requests[0]!.tools.map((tool) => tool.name)).toContain('GitLog');
    const [result] = toolResults(provider.requests[1]!.messages);
    expect(result!.isError).toBeFalsy();
    expect(text(result!)).toContain('3 commits in v1.0..HEAD, newest first:');
    expect(text(result!)).toContain('fix!: reject empty ranges (Ada Example, 2025-03-03)');
    expect(text(result!)).not.toContain('Initial import');

    // A new connection to the database finds the session: prompt, GitLog call and result, answer.
    const store = new SqliteSessionStore(join(home, '.relnotes', 'sessions.db'));
    try {
      const stored = store.load(run.sessionId!);
      expect(stored).toMatchObject({ id: run.sessionId, cwd: repository });
      expect(stored!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(JSON.stringify(stored!.messages[1])).toContain('"name":"GitLog"');
      expect(store.list().map((listed) => listed.id)).toEqual([run.sessionId]);
    } finally {
      store.close();
    }

    // --resume in a new kernel continues it: the model sees the earlier turn.
    const follow = new ScriptedProvider({ turns: [{ text: 'Shorter: JSON output, stricter ranges.' }] });
    const resumed = await relnotes(['--resume', run.sessionId!, 'Make it shorter'], follow);
    expect(resumed).toMatchObject({ code: 0, stdout: 'Shorter: JSON output, stricter ranges.\n', sessionId: run.sessionId });
    expect(follow.requests[0]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
  });

  it('/release-notes checks the range, then asks the model to draft the notes', async () => {
    const provider = new ScriptedProvider({ turns: draftingModel() });
    const run = await relnotes(['/release-notes', 'v1.0..HEAD'], provider);
    expect(run).toMatchObject({ code: 0, stdout: `${NOTES}\n` });
    expect(run.stderr).toContain('Drafting release notes for v1.0..HEAD (3 commits).');
    const prompt = provider.requests[0]!.messages.at(-1)!;
    expect(JSON.stringify(prompt.content)).toContain('Draft the release notes for v1.0..HEAD. Read the commits with the GitLog tool (range \\"v1.0..HEAD\\") first.');
    expect(toolResults(provider.requests[1]!.messages)[0]!.isError).toBeFalsy();
  });

  it('/release-notes refuses a range git does not know, before any model call', async () => {
    const provider = new ScriptedProvider({ turns: draftingModel() });
    const run = await relnotes(['/release-notes', 'v9.9..HEAD'], provider);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('git does not know the range "v9.9..HEAD"');
    expect(provider.callCount).toBe(0);
  });

  it('GitLog reports a bad range to the model as an error result it can recover from', async () => {
    const provider = new ScriptedProvider({ turns: draftingModel('v0.1..HEAD') });
    const run = await relnotes(['-p', 'notes since v0.1'], provider);
    expect(run.code).toBe(0);
    const [result] = toolResults(provider.requests[1]!.messages);
    expect(result!.isError).toBe(true);
    expect(text(result!)).toContain('git tag --list');
  });

  it('tools outside the shipped rule are refused with the --allow rule to add', async () => {
    const provider = new ScriptedProvider({
      turns: (request) => (request.index === 0 ? { toolCalls: [{ id: 'call_bash', name: 'Bash', input: { command: 'git push' } }] } : { text: 'Could not push.' }),
    });
    const run = await relnotes(['-p', 'push the tag'], provider);
    expect(run.code).toBe(0);
    const [result] = toolResults(provider.requests[1]!.messages);
    expect(result!.isError).toBe(true);
    expect(text(result!)).toContain('To allow it, run relnotes with --allow "Bash(git push)".');
  });

  it('ships the GitLog rule: without it the same call would need approval', async () => {
    const query = { toolName: 'GitLog', input: { range: 'v1.0..HEAD' }, mode: 'default' as const, cwd: repository, sessionId: 's' };
    const base = { cwd: repository, home, provider: { kind: 'demo' as const }, sessionLog: false, mcp: false as const };
    const product = await createKernel({ plugins: releaseNotesPreset({ ...base, database: join(home, 'sessions.db') }) });
    const bare = await createKernel({ plugins: cliPreset({ ...base, plugins: [gitLog()] }) });
    try {
      expect(await product.get(PermissionPolicy).evaluate(query)).toMatchObject({ decision: 'auto', rule: 'GitLog' });
      expect(await bare.get(PermissionPolicy).evaluate(query)).toMatchObject({ decision: 'approve' });
    } finally {
      await Promise.all([product.shutdown(), bare.shutdown()]);
    }
  });
});
