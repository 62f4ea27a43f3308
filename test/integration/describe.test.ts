import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel } from '@tessera/kernel';
import { backgroundRuntime } from '@tessera/plugin-background';
import { compaction } from '@tessera/plugin-compaction';
import { contextWindow } from '@tessera/plugin-context-window';
import { hooksPlugin } from '@tessera/plugin-hooks';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { promptHistory } from '@tessera/plugin-prompt-history';
import { sessionLogger } from '@tessera/plugin-session-logger';
import { jsonlSessionStore } from '@tessera/plugin-session-store-jsonl';
import { subagents } from '@tessera/plugin-subagents';
import { builtinTools } from '@tessera/plugin-tools';
import { editCheckpoints, reversibleExecution } from '@tessera/plugin-checkpoints';
import { promptFileReferences } from '@tessera/plugin-prompt-references';
import { systemPrompt } from '@tessera/plugin-system-prompt';
import { testPreset } from '@tessera/preset-test';
import { describe, expect, it } from 'vitest';

// The whole first-party plugin set's wiring, as `kernel.describe()` (and so `doctor`) shows
// it, pinned in a golden file: a change to what a plugin provides, requires, uses when
// present, contributes or taps (and at which stage) shows up here as a diff to review.
// Regenerate with UPDATE_GOLDEN=1 after a deliberate change.

const golden = join(dirname(fileURLToPath(import.meta.url)), 'golden', 'describe-full.json');

describe('kernel.describe() of the full plugin set', () => {
  it('matches the golden file', async () => {
    // Composing builds nothing and touches no file (factories only keep options).
    const kernel = await createKernel({
      plugins: testPreset({
        turns: [],
        replace: [permissionsPlugin({ rules: { deny: ['Bash(rm *)'] } }), jsonlSessionStore({ agentDir: '/nonexistent/tessera-golden', terminalId: null }), sessionLogger({ dir: '/nonexistent/tessera-golden/logs' })],
        plugins: [
          hooksPlugin({}),
          ...builtinTools(),
          backgroundRuntime(),
          subagents({ discover: false, worktree: false }),
          compaction(),
          contextWindow(),
          promptHistory({ path: ':memory:' }),
          promptFileReferences(),
          systemPrompt(),
          editCheckpoints(),
          reversibleExecution({ mode: 'local-first' }),
        ],
      }),
    });
    const description = kernel.describe();
    await kernel.shutdown();
    const actual = `${JSON.stringify(description, null, 2)}\n`;
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden, actual);
    expect(actual).toBe(readFileSync(golden, 'utf8'));
    expect(existsSync('/nonexistent/tessera-golden')).toBe(false);
  });
});
