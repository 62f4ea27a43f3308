import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { AgentDefinitionRegistry, BUILTIN_AGENT_DEFINITIONS, filterSubagentTools } from './agent-definitions.js';
import { SubagentTranscriptLogger, subagentTranscriptPath } from './subagent-transcript-logger.js';

const tools = (...names: string[]): Tool[] =>
  names.map((name) => ({ name, description: name, parameters: {}, execute: async () => ({ success: true, output: '' }) }));
const names = (list: Tool[]) => list.map((tool) => tool.name);

describe('filterSubagentTools', () => {
  const all = tools('Read', 'Write', 'Edit', 'Bash', 'Agent', 'Task', 'mcp__gh__issue', 'mcp__gh__pr', 'mcp__db__q');

  it('removes denied tools first, then keeps only allowed ones, then removes agent tools', () => {
    expect(names(filterSubagentTools(all, {}))).toEqual(['Read', 'Write', 'Edit', 'Bash', 'mcp__gh__issue', 'mcp__gh__pr', 'mcp__db__q']);
    expect(names(filterSubagentTools(all, { disallowedTools: ['Write', 'Edit'] }))).toEqual(['Read', 'Bash', 'mcp__gh__issue', 'mcp__gh__pr', 'mcp__db__q']);
    expect(names(filterSubagentTools(all, { tools: ['Read', 'Write', 'Agent(explore)'], disallowedTools: ['Write'] }))).toEqual(['Read']);
    expect(names(filterSubagentTools(all, { tools: ['Bash(git log:*)', 'mcp__gh__*'] }))).toEqual(['Bash', 'mcp__gh__issue', 'mcp__gh__pr']);
    expect(names(filterSubagentTools(all, { tools: ['Task'] }))).toEqual([]); // Task is Agent: never granted
  });

  it('a request allowlist (a forked skill\'s allowed-tools) narrows after the definition, never widens', () => {
    expect(names(filterSubagentTools(all, { disallowedTools: ['Write'] }, undefined, ['Read', 'Write', 'Bash(git:*)']))).toEqual(['Read', 'Bash']);
    expect(names(filterSubagentTools(all, { tools: ['Read'] }, undefined, ['Read', 'Edit']))).toEqual(['Read']);
  });

  it('Explore and Plan are read-only built-ins; general-purpose keeps everything but agent tools', () => {
    const registry = new AgentDefinitionRegistry();
    expect(names(filterSubagentTools(all, registry.require('Explore')))).not.toContain('Write');
    expect(names(filterSubagentTools(all, registry.require('Plan')))).not.toContain('Edit');
    expect(names(filterSubagentTools(all, registry.require('general-purpose')))).toContain('Write');
    expect(BUILTIN_AGENT_DEFINITIONS.map((d) => d.name)).toEqual(['general-purpose', 'Explore', 'Plan']);
  });

  it('a later definition replaces an earlier one of the same name', () => {
    const registry = new AgentDefinitionRegistry();
    registry.add({ name: 'Plan', description: 'mine', systemPrompt: 'x', source: 'project' });
    expect(registry.require('Plan').source).toBe('project');
    expect(() => registry.require('missing')).toThrow(expect.objectContaining({ code: 'subagent_unknown_type' }));
  });
});

describe('SubagentTranscriptLogger', () => {
  it('writes JSONL at the spec path, redacts secrets, and refuses path escapes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-transcript-'));
    try {
      const logger = new SubagentTranscriptLogger(dir, 'parent-1', 'agent_1');
      expect(logger.path).toBe(join(dir, 'parent-1', 'subagents', 'agent_1.jsonl'));
      logger.log('agent_1', 'provider_request', { headers: { authorization: 'Bearer sk-live', apiKey: 'k' }, inputTokens: 12 });
      logger.log('agent_1', 'text_delta', { delta: 'hi' });
      await logger.flush();
      logger.log('agent_1', 'late', {}); // after flush: dropped, never throws
      const lines = (await readFile(logger.path, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatchObject({ sessionId: 'agent_1', event: 'provider_request', headers: { authorization: '[REDACTED]', apiKey: '[REDACTED]' }, inputTokens: 12 });
      expect(lines[1]).toMatchObject({ event: 'text_delta', delta: 'hi' });
      expect(() => subagentTranscriptPath(dir, '..', 'agent_1')).toThrow(/Invalid parent session id/);
      expect(() => subagentTranscriptPath(dir, 'p', 'a/b')).toThrow(/Invalid subagent id/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
