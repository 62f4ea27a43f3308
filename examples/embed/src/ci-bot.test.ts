import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { askRepository } from './ci-bot.js';

let server: FakeAnthropicServer;
let repository: string;

beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
  repository = await mkdtemp(join(tmpdir(), 'tessera-ci-bot-'));
  await writeFile(join(repository, 'package.json'), JSON.stringify({ name: 'demo', scripts: { test: 'vitest run' } }, null, 2));
});

afterEach(async () => {
  await server.close();
  await rm(repository, { recursive: true, force: true });
});

it('reads the repository through the loopback Messages API and answers', async () => {
  server.reply({ toolCalls: [{ id: 'toolu_read', name: 'Read', input: { file_path: join(repository, 'package.json') } }] }, { text: 'The tests run with vitest.' });

  const answer = await askRepository('Which test runner does this repository use?', repository, { apiKey: 'test', baseURL: server.baseURL });

  expect(answer).toEqual({ ok: true, answer: 'The tests run with vitest.', toolsUsed: ['Read'], turns: 2 });
  expect(JSON.stringify(server.bodies[0]!.system)).toContain('You are a CI bot.');
  expect((server.bodies[0]!.tools as Array<{ name: string }>).map((tool) => tool.name).sort()).toEqual(['Glob', 'Grep', 'Read']);
  // The file's text went back to the model in the second request.
  expect(JSON.stringify(server.bodies[1]!.messages)).toContain('vitest run');
});

it('reports a failed model call as ok: false with the error', async () => {
  server.fail(401, { message: 'invalid x-api-key' });

  const answer = await askRepository('Anything?', repository, { apiKey: 'wrong', baseURL: server.baseURL, maxRetries: 0 });

  expect(answer).toMatchObject({ ok: false, answer: '', toolsUsed: [], turns: 0 });
  expect(answer.error).toMatch(/invalid x-api-key|auth/i);
});
