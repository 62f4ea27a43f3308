import { describe, expect, it } from 'vitest';
import { FORK_WORKER_PROMPT_SUFFIX, SUBAGENT_PROMPT_SUFFIX, assembleSubagentPrompt } from './subagent-prompt.js';

describe('assembleSubagentPrompt', () => {
  it('puts the agent body, CLAUDE.md, AGENTS.md and the subagent suffix in that order', () => {
    expect(assembleSubagentPrompt({ agentBody: 'You review code.\n', claudeMd: 'Claude rules.', agentsMd: 'Agents rules.' })).toBe(
      `You review code.\n\n## CLAUDE.md\n\nClaude rules.\n\n## AGENTS.md\n\nAgents rules.\n\n${SUBAGENT_PROMPT_SUFFIX}`,
    );
  });

  it('uses the 500-word fork worker suffix and leaves blank parts out', () => {
    const prompt = assembleSubagentPrompt({ agentBody: 'Body.', claudeMd: '  ', isForkWorker: true });
    expect(prompt).toBe(`Body.\n\n${FORK_WORKER_PROMPT_SUFFIX}`);
    expect(FORK_WORKER_PROMPT_SUFFIX).toContain('500 words');
    expect(SUBAGENT_PROMPT_SUFFIX).toMatch(/concise report/);
  });
});
