import { readdirSync, statSync, type Dirent } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AgentDefinition, Diagnostic, ParseResult } from '@tessera/contracts';
import { readAgentDefinition } from '@tessera/formats';
import { BUILTIN_AGENT_DEFINITIONS } from './agent-definitions.js';

/** Reads one `.md` agent file; `@tessera/formats`' `readAgentDefinition` by default. */
export type TAgentDefinitionReader = (path: string, source: string) => ParseResult<AgentDefinition>;

export interface AgentDefinitionDiscoveryOptions {
  cwd: string;
  /** Default `os.homedir()`. */
  home?: string;
  readDefinition?: TAgentDefinitionReader;
  /** Only the directories of these sources are read (`project` / `user`; see `agentDefinitionDirectories`). Default: all. */
  sources?: ReadonlyArray<'project' | 'user'>;
  /** Default the three built-ins; custom definitions replace them by name. */
  builtins?: readonly AgentDefinition[];
}

export interface AgentDefinitionDiscovery {
  definitions: AgentDefinition[];
  diagnostics: Diagnostic[];
  /** Directories searched, highest priority first. */
  searched: string[];
}

/** Scan order, highest priority first (spec: AgentDefinitionLoader). */
export function agentDefinitionDirectories(cwd: string, home: string): Array<{ dir: string; source: 'project' | 'user' }> {
  return [
    { dir: join(cwd, '.tessera', 'agents'), source: 'project' },
    { dir: join(cwd, '.agents', 'agents'), source: 'project' },
    { dir: join(cwd, '.claude', 'agents'), source: 'project' },
    { dir: join(home, '.tessera', 'agents'), source: 'user' },
    { dir: join(home, '.claude', 'agents'), source: 'user' },
  ];
}

/** `.md` files under `dir`, recursively, sorted; symlinked directories are not followed (no loops). */
function markdownFiles(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md') && (entry.isFile() || (entry.isSymbolicLink() && isFile(path)))) files.push(path);
  }
  return files;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Built-in plus custom agent definitions. A file with an `error` diagnostic is skipped (its
 * diagnostics are returned); a name defined twice keeps the higher-priority directory's file.
 */
export function discoverAgentDefinitions(options: AgentDefinitionDiscoveryOptions): AgentDefinitionDiscovery {
  const read = options.readDefinition ?? ((path, source) => readAgentDefinition(path, { source }));
  const { sources } = options;
  const directories = agentDefinitionDirectories(options.cwd, options.home ?? homedir()).filter(({ source }) => sources === undefined || sources.includes(source));
  const diagnostics: Diagnostic[] = [];
  const custom = new Map<string, AgentDefinition>();
  const foundIn = new Map<string, string>();
  for (const { dir, source } of directories) {
    for (const file of markdownFiles(dir)) {
      const { value, diagnostics: found } = read(file, source);
      diagnostics.push(...found);
      if (found.some((diagnostic) => diagnostic.severity === 'error')) continue;
      const winner = custom.get(value.name);
      if (winner) {
        diagnostics.push({
          // Two files in one directory is a mistake; a higher-priority directory shadowing is by design.
          severity: foundIn.get(value.name) === dir ? 'warning' : 'info',
          file,
          path: 'name',
          message: `Agent "${value.name}" is also defined in ${winner.file ?? winner.source}, which takes priority; rename one of them to use both.`,
        });
        continue;
      }
      custom.set(value.name, value);
      foundIn.set(value.name, dir);
    }
  }
  const byName = new Map<string, AgentDefinition>();
  for (const builtin of options.builtins ?? BUILTIN_AGENT_DEFINITIONS) byName.set(builtin.name, builtin);
  for (const definition of custom.values()) byName.set(definition.name, definition);
  return { definitions: [...byName.values()], diagnostics, searched: directories.map(({ dir }) => dir) };
}
