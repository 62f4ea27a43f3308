// Way 1: the preset's `replace` option. The replacement takes the place of the preset member
// that provides the same token, and anything that provides nothing the preset has is added.
import { ApprovalHandler, type ToolMessage } from '@tessera/contracts';
import { createKernel, defineTool, toolsPlugin } from '@tessera/kernel';
import { recordingApprovals, type RecordingApprovalHandler } from '@tessera/kernel/testing';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { testPreset } from '@tessera/preset-test';
import { expect, it } from 'vitest';
import { z } from 'zod';

it('a recording approval handler answers the permission guard, and records what it was asked', async () => {
  const published: string[] = [];
  const publish = defineTool({
    name: 'publish',
    description: 'Publish the package to a release channel',
    inputSchema: z.object({ channel: z.string() }),
    execute: ({ channel }) => (published.push(channel), { success: true, output: `published to ${channel}` }),
  });
  const kernel = await createKernel({
    plugins: testPreset({
      turns: [
        { toolCalls: [{ name: 'publish', input: { channel: 'beta' } }, { name: 'publish', input: { channel: 'stable' } }] },
        { text: 'Published to beta only.' },
      ],
      // permissionsPlugin provides PermissionPolicy, so it takes the allow-all policy's place;
      // the preset has no ApprovalHandler, so the recording one is added.
      replace: [permissionsPlugin({ rules: { ask: ['publish'] } }), recordingApprovals(({ input }) => (input as { channel: string }).channel === 'beta')],
      plugins: [toolsPlugin(publish)],
    }),
  });

  const session = kernel.createSession({ permissionMode: 'default' });
  expect(await session.run('Publish the release.')).toBe('Published to beta only.');

  expect(published).toEqual(['beta']);
  const approvals = kernel.get(ApprovalHandler) as RecordingApprovalHandler;
  expect(approvals.requests.map(({ toolName, input }) => ({ toolName, input }))).toEqual([
    { toolName: 'publish', input: { channel: 'beta' } },
    { toolName: 'publish', input: { channel: 'stable' } },
  ]);
  const results = session.getHistory().find((message): message is ToolMessage => message.role === 'tool')!.content;
  expect(results.map((result) => result.isError ?? false)).toEqual([false, true]);
  expect(results[1]!.content).toContain('publish was not approved');
  await kernel.shutdown();
});
