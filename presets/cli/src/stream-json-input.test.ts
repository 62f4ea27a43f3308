import { readFileSync } from 'node:fs';
import { checkAnthropicConversation } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLine, LoopbackCli, SDK_FLAGS, userLine } from './loopback-cli.test-helper.js';

// The Agent SDK's streaming input (`--input-format stream-json`) as a real process (the built
// bin) against the loopback Anthropic API: what a user line and an `initialize` request carry
// reaches the model's requests.

const STREAM = [...SDK_FLAGS];
/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

let cli: LoopbackCli;
let server: LoopbackCli['server'];
beforeEach(async () => {
  cli = await LoopbackCli.start();
  server = cli.server;
});
afterEach(() => cli.close());

const run = (argv: string[], input: string) => cli.run(argv, input);
const line = jsonLine;
const user = userLine;
const image = (source: Record<string, unknown>): Record<string, unknown> => ({ type: 'image', source });

function storedSession(): string {
  const files = cli.sessionFiles();
  expect(files).toHaveLength(1);
  return readFileSync(files[0]!, 'utf8');
}

describe('stream-json input: images in user messages', () => {
  it('a base64 image block reaches the provider as an image block, in its place beside the text, and stays in the session', async () => {
    server.reply({ text: ['A red dot.'] }, { text: ['Still a dot.'] }, { text: ['Just a picture.'] });
    const { code, stderr, out } = await run(STREAM, user([{ type: 'text', text: 'What is this?' }, image({ type: 'base64', media_type: 'image/png', data: PNG })]) + user('And now?') + user([image({ type: 'base64', media_type: 'image/jpeg', data: PNG })]));
    expect(code, stderr).toBe(0);
    expect(out.filter((message) => message.type === 'system' && message.subtype === 'error')).toEqual([]);
    expect(out.filter((message) => message.type === 'result').map((message) => [message.subtype, message.result])).toEqual([
      ['success', 'A red dot.'],
      ['success', 'Still a dot.'],
      ['success', 'Just a picture.'],
    ]);
    const first = server.bodies[0] as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    expect(first.messages).toHaveLength(1);
    expect(first.messages[0]!.content.map(({ cache_control: _, ...block }) => block)).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ]);
    // The image is part of the conversation: the next turn sends it again.
    const second = server.bodies[1] as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(second.messages[0])).toContain(PNG);
    // An image-only message: no empty text block next to it.
    const third = server.bodies[2] as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    expect(third.messages.at(-1)!.content.map(({ cache_control: _, ...block }) => block)).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: PNG } }]);
    for (const body of server.bodies) expect(checkAnthropicConversation(body)).toEqual([]);
    expect(storedSession()).toContain(PNG);
  }, 60_000);

  it('a bad image block gets an error result naming the line and field, no model call; the next message still runs', async () => {
    server.reply({ text: ['fine'] });
    const cases: Array<[Record<string, unknown>, string]> = [
      [image({ type: 'url', url: 'https://example.com/cat.png' }), 'stdin line 1: message.content[1].source.type is "url"'],
      [image({ type: 'base64', media_type: 'image/png' }), 'stdin line 2: message.content[1].source.data must be'],
      [image({ type: 'base64', media_type: 'image/tiff', data: PNG }), 'stdin line 3: message.content[1].source.media_type must be one of image/jpeg, image/png, image/gif, image/webp; got "image/tiff"'],
      [image({ type: 'base64', media_type: 'image/png', data: `data:image/png;base64,${PNG}` }), 'stdin line 4: message.content[1].source.data is not base64 (it is a data URL'],
      [{ type: 'image' }, 'stdin line 5: message.content[1].source must be an object'],
    ];
    const input = cases.map(([block]) => user([{ type: 'text', text: 'Look' }, block])).join('') + user('hello');
    const { code, stderr, out } = await run(STREAM, input);
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/\n\s+at /);
    const results = out.filter((message) => message.type === 'result');
    expect(results).toHaveLength(cases.length + 1);
    cases.forEach(([, expected], index) => {
      expect(results[index]).toMatchObject({ subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [expect.stringContaining(expected)] });
    });
    expect(results.at(-1)).toMatchObject({ subtype: 'success', result: 'fine' });
    expect(server.requests).toHaveLength(1);
    expect(JSON.stringify(server.bodies[0])).not.toContain('Look');
  }, 60_000);
});

describe('stream-json input: empty user messages', () => {
  it('"" and [] each get an error result naming the line and field, no model call; the process goes on with the next line', async () => {
    server.reply({ text: ['fine'] });
    const { code, stderr, out } = await run(STREAM, user('') + user([]) + user('hello'));
    expect(code, stderr).toBe(0);
    const results = out.filter((message) => message.type === 'result');
    expect(results).toHaveLength(3);
    expect(results[0]).toMatchObject({ subtype: 'error_during_execution', is_error: true, num_turns: 0, terminal_reason: 'invalid_input', errors: [expect.stringContaining('stdin line 1: message.content is an empty string')] });
    expect(results[1]).toMatchObject({ subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [expect.stringContaining('stdin line 2: message.content is an empty array')] });
    expect(results[2]).toMatchObject({ subtype: 'success', result: 'fine' });
    expect(server.requests).toHaveLength(1);
  }, 60_000);
});

describe('stream-json input: agents in the SDK initialize request', () => {
  const initialize = (agents: unknown, requestId = 'init_1'): string => line({ type: 'control_request', request_id: requestId, request: { subtype: 'initialize', hooks: {}, agents, systemPrompt: [''] } });

  it('are subagents of the run: listed in the initialize answer and system/init, and run with their prompt, tools and model', async () => {
    server.reply(
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: 'reviewer Check the notes.' } }] },
      { text: ['The notes are fine.'] }, // the reviewer's own model call
      { text: ['Reviewed.'] },
    );
    const agents = { reviewer: { description: 'Reviews notes', prompt: 'INIT REVIEWER PROMPT', tools: ['Read', 'Grep'], model: 'claude-haiku-4-5' } };
    const { code, stderr, out } = await run([...STREAM, '--allowedTools', 'tessera_command_agent'], initialize(agents) + user([{ type: 'text', text: 'review' }]));
    expect(code, stderr).toBe(0);
    const answer = out.find((message) => message.type === 'control_response');
    expect(answer?.response).toMatchObject({ subtype: 'success', request_id: 'init_1', response: { agents: expect.arrayContaining([{ name: 'reviewer', description: 'Reviews notes' }]) } });
    const init = out.find((message) => message.type === 'system' && message.subtype === 'init');
    expect(init?.agents).toEqual(expect.arrayContaining(['general-purpose', 'reviewer']));
    expect(out.indexOf(answer!)).toBeLessThan(out.indexOf(init!));
    const reviewer = server.bodies[1] as { system: unknown; tools: Array<{ name: string }>; model: string };
    expect(JSON.stringify(reviewer.system)).toContain('INIT REVIEWER PROMPT');
    expect(reviewer.tools.map((tool) => tool.name).filter((name) => name !== 'web_search').sort()).toEqual(['Grep', 'Read']);
    expect(reviewer.model).toBe('claude-haiku-4-5');
    expect(out.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Reviewed.' });
  }, 60_000);

  it('a later initialize adds its agents as well, checked the same way: answered with the new list, and later turns run them', async () => {
    server.reply(
      { text: ['Hello.'] },
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: 'auditor Audit the notes.' } }] },
      { text: ['The notes add up.'] }, // the auditor's own model call
      { text: ['Audited.'] },
    );
    const first = { reviewer: { description: 'Reviews notes', prompt: 'INIT REVIEWER PROMPT' } };
    const later = { auditor: { description: 'Audits notes', prompt: 'LATER AUDITOR PROMPT', tools: ['Read'] } };
    const input = initialize(first) + user('hello') + initialize(later, 'init_2') + initialize({ broken: { description: 'No prompt' } }, 'init_3') + user('audit');
    const { code, stderr, out } = await run([...STREAM, '--allowedTools', 'tessera_command_agent'], input);
    expect(code, stderr).toBe(0);
    const answer = (id: string) => out.find((message) => message.type === 'control_response' && message.response.request_id === id)?.response;
    expect(answer('init_2')).toMatchObject({ subtype: 'success', response: { agents: expect.arrayContaining([{ name: 'reviewer', description: 'Reviews notes' }, { name: 'auditor', description: 'Audits notes' }]) } });
    expect(answer('init_3')).toMatchObject({ subtype: 'error', error: expect.stringContaining('initialize: agents: agent "broken": "prompt" must be a non-empty string') });
    expect(answer('init_3').error).toContain('None of its agents were added');
    const auditor = server.bodies[2] as { system: unknown; tools: Array<{ name: string }> };
    expect(JSON.stringify(auditor.system)).toContain('LATER AUDITOR PROMPT');
    expect(auditor.tools.map((tool) => tool.name).filter((name) => name !== 'web_search')).toEqual(['Read']);
    expect(out.filter((message) => message.type === 'result').map((message) => message.result)).toEqual(['Hello.', 'Audited.']);
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('a later initialize that is the last line of the input is still answered before the process ends', async () => {
    const later = { auditor: { description: 'Audits notes', prompt: 'LATER AUDITOR PROMPT' } };
    // No user message: the input ends right after the request, while its answer is being made.
    const { code, stderr, out } = await run(STREAM, initialize({}) + initialize(later, 'init_last'));
    expect(code, stderr).toBe(0);
    const answer = out.find((message) => message.type === 'control_response' && message.response.request_id === 'init_last')?.response;
    expect(answer).toMatchObject({ subtype: 'success', response: { agents: expect.arrayContaining([{ name: 'auditor', description: 'Audits notes' }]) } });
  }, 60_000);

  it('a bad definition is an error answer naming the field; the run goes on without it', async () => {
    server.reply({ text: ['hi'] });
    const { code, stderr, out } = await run(STREAM, initialize({ reviewer: { description: 'Reviews notes', tools: 'Read' } }) + user('hello'));
    expect(code, stderr).toBe(0);
    const answer = out.find((message) => message.type === 'control_response');
    expect(answer?.response).toMatchObject({ subtype: 'error', request_id: 'init_1', error: expect.stringContaining('initialize: agents: agent "reviewer": "prompt" must be a non-empty string') });
    const init = out.find((message) => message.type === 'system' && message.subtype === 'init');
    expect(init?.agents).not.toContain('reviewer');
    expect(out.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'hi' });
    expect(stderr).not.toMatch(/\n\s+at /);

    server.reply({ text: ['hi'] });
    const notObject = await run(STREAM, initialize(['reviewer'], 'init_2') + user('hello'));
    expect(notObject.code, notObject.stderr).toBe(0);
    expect(notObject.out.find((message) => message.type === 'control_response')?.response).toMatchObject({ subtype: 'error', request_id: 'init_2', error: expect.stringContaining('initialize: agents must be a JSON object') });
    expect(notObject.out.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
  }, 60_000);
});
