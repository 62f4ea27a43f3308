import { describe, expect, it } from 'vitest';
import { FORK_WORKER_PROMPT_SUFFIX, SUBAGENT_PROMPT_SUFFIX, assembleSubagentPrompt, contextForSubagent } from './subagent-prompt.js';

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

describe('contextForSubagent', () => {
  it('puts AGENTS.md files and their imports under agentsMd, every other file under claudeMd, in load order', () => {
    const file = (path: string, content: string, importedFrom?: string) => ({ path, scope: 'project' as const, content, truncated: false, ...(importedFrom ? { importedFrom } : {}) });
    const context = contextForSubagent({
      diagnostics: [],
      files: [
        file('/home/u/.claude/CLAUDE.md', 'User rule.'),
        file('/repo/AGENTS.md', 'Agents rule.'),
        file('/repo/docs/style.md', 'Imported by AGENTS.md.', '/repo/AGENTS.md'),
        file('/repo/CLAUDE.md', 'Claude rule.\n'),
        file('/repo/notes.md', 'Imported by CLAUDE.md.', '/repo/CLAUDE.md'),
        file('/repo/pkg/CLAUDE.local.md', '  '),
      ],
    });
    expect(context).toEqual({ claudeMd: 'User rule.\n\nClaude rule.\n\nImported by CLAUDE.md.', agentsMd: 'Agents rule.\n\nImported by AGENTS.md.' });
    expect(contextForSubagent({ files: [], diagnostics: [] })).toEqual({});
  });
});
