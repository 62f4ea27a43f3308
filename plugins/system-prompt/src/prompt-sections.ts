import { responseLanguageLine, type AgentDefinition, type SkillEntry } from '@tessera/contracts';
import type { ContextFile } from '@tessera/formats';
import { describeGitState, type GitSummary } from './git-summary.js';
import { describeProjectKind, type ProjectKind } from './project-kind.js';
import type { ProjectMemory } from './read-project-memory.js';

/** Section names, in the order they appear (empty sections are left out). */
export const SECTION_ORDER = [
  'base',
  'environment',
  'context-files',
  'project-memory',
  'task-context',
  'skills',
  'agents',
  'append',
] as const;

export type SectionName = (typeof SECTION_ORDER)[number];

export interface EnvironmentFacts {
  cwd: string;
  platform: string;
  /** `YYYY-MM-DD`. */
  date: string;
  model?: string;
  git?: GitSummary;
  /** The language the model answers in (settings.json `language`). */
  language?: string;
  /** What the project is written in, from its marker files. */
  project?: ProjectKind;
}

export function renderEnvironment(facts: EnvironmentFacts): string {
  const lines = ['## Environment', '', `- Working directory: ${facts.cwd}`, `- Platform: ${facts.platform}`, `- Date: ${facts.date}`];
  if (facts.model) lines.push(`- Model: ${facts.model}`);
  if (facts.project) lines.push(`- Project: ${describeProjectKind(facts.project)}`);
  if (facts.language) lines.push(responseLanguageLine(facts.language));
  // Outside a repository (or with git off) the git lines are simply absent.
  if (facts.git) lines.push(`- Git branch: ${facts.git.branch}`, `- Git status: ${describeGitState(facts.git)}`);
  return lines.join('\n');
}

const SCOPE_LABEL: Readonly<Record<ContextFile['scope'], string>> = {
  user: 'user instructions',
  project: 'project instructions',
  local: 'local project instructions',
  import: 'imported',
};

export function renderContextFiles(files: readonly ContextFile[]): string {
  if (files.length === 0) return '';
  const blocks = files.map((file) => {
    const label = file.importedFrom === undefined ? SCOPE_LABEL[file.scope] : `imported by ${file.importedFrom}`;
    return `### ${file.path} (${label})\n\n${file.content.trimEnd()}`;
  });
  return `## Context Files\n\n${blocks.join('\n\n')}`;
}

export function renderProjectMemory(memory: ProjectMemory | undefined): string {
  if (memory === undefined) return '';
  const note = memory.truncated ? `\n\n(Only the start of ${memory.path} is shown: ${memory.bytes} bytes in the file.)` : '';
  return `## Project Memory\n\n${memory.content.trimEnd()}${note}`;
}

/** A name and a one-line description, as the model sees an entry. */
export interface Listing {
  name: string;
  description: string;
}

export function renderListing(heading: string, entries: readonly Listing[]): string {
  if (entries.length === 0) return '';
  return `## ${heading}\n\n${entries.map((entry) => (entry.description ? `- ${entry.name}: ${entry.description}` : `- ${entry.name}`)).join('\n')}`;
}

/** Model-invocable skills by the name they are invoked with, first source winning, sorted. */
export function skillListings(entries: readonly SkillEntry[]): Listing[] {
  return sortedUnique(
    entries
      .filter((entry) => entry.modelInvocable !== false)
      .map((entry) => ({ name: entry.qualifiedName ?? entry.id, description: oneLine(entry.description) })),
  );
}

export function agentListings(definitions: readonly AgentDefinition[]): Listing[] {
  return sortedUnique(definitions.map((definition) => ({ name: definition.name, description: oneLine(definition.description) })));
}

function sortedUnique(listings: Listing[]): Listing[] {
  const seen = new Set<string>();
  const unique = listings.filter((listing) => listing.name !== '' && !seen.has(listing.name) && seen.add(listing.name));
  // Code-unit order: the same on every machine, whatever the locale.
  return unique.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function oneLine(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}
