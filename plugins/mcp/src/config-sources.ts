import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Diagnostic, McpServerDeclaration, McpServerScope, McpServerSource } from '@tessera/contracts';
import { parseJsonText, parseMcpServers, readMcpConfig, type McpServerConfig } from '@tessera/formats';

function declarations(servers: Record<string, McpServerConfig>, scope: McpServerScope, file: string | undefined): McpServerDeclaration[] {
  return Object.entries(servers).map(([name, spec]) => ({ name, spec, scope, ...(file === undefined ? {} : { file }) }));
}

/**
 * The project's `.mcp.json` (scope `project`), read again for every session so edits apply to
 * the next one. Its servers still need approval before they start; the pool decides that.
 */
export class ProjectMcpJsonSource implements McpServerSource {
  readonly name = 'project .mcp.json';
  private findings: Diagnostic[] = [];

  servers(session: { readonly cwd: string }): McpServerDeclaration[] {
    const file = join(session.cwd, '.mcp.json');
    if (!existsSync(file)) {
      this.findings = [];
      return [];
    }
    const { value, diagnostics } = readMcpConfig(file);
    this.findings = diagnostics;
    return declarations(value.servers, 'project', file);
  }

  diagnostics(): readonly Diagnostic[] {
    return this.findings;
  }
}

/**
 * Servers given as a map (`mcpServers` from user or local settings, or an SDK host's own list).
 * Parsed once, with the same reader `.mcp.json` uses; bad entries are reported and skipped.
 */
export class StaticMcpServerSource implements McpServerSource {
  private readonly list: McpServerDeclaration[];
  private readonly findings: Diagnostic[];

  constructor(
    readonly name: string,
    servers: unknown,
    scope: McpServerScope,
    /** What messages call the origin: a settings file path, or a label such as `settings`. */
    origin: string,
  ) {
    const parsed = parseMcpServers(servers, origin, 'mcpServers');
    this.list = declarations(parsed.servers, scope, origin);
    this.findings = parsed.diagnostics;
  }

  servers(): McpServerDeclaration[] {
    return this.list;
  }

  diagnostics(): readonly Diagnostic[] {
    return this.findings;
  }
}

/**
 * `--mcp-config` values (scope `cli`): each one is a file path or an inline JSON string, in
 * either `.mcp.json` shape. Relative paths resolve against `baseDir` (the directory the CLI ran in).
 */
export class CliMcpConfigSource implements McpServerSource {
  readonly name = '--mcp-config';
  private readonly list: McpServerDeclaration[] = [];
  private readonly findings: Diagnostic[] = [];

  constructor(entries: readonly string[], baseDir: string) {
    entries.forEach((entry, index) => {
      const trimmed = entry.trim();
      if (trimmed.startsWith('{')) {
        const label = `--mcp-config[${index}] (inline JSON)`;
        const json = parseJsonText(trimmed, label);
        if (!json.ok) {
          this.findings.push(json.diagnostic);
          return;
        }
        this.add(json.value, label);
        return;
      }
      const file = isAbsolute(trimmed) ? trimmed : resolve(baseDir, trimmed);
      const { value, diagnostics } = readMcpConfig(file);
      this.findings.push(...diagnostics);
      this.list.push(...declarations(value.servers, 'cli', file));
    });
  }

  private add(root: unknown, label: string): void {
    const wrapped = root !== null && typeof root === 'object' && !Array.isArray(root) && 'mcpServers' in root;
    const parsed = parseMcpServers(wrapped ? (root as { mcpServers: unknown }).mcpServers : root, label, wrapped ? 'mcpServers' : '');
    this.findings.push(...parsed.diagnostics);
    this.list.push(...declarations(parsed.servers, 'cli', label));
  }

  servers(): McpServerDeclaration[] {
    return this.list;
  }

  diagnostics(): readonly Diagnostic[] {
    return this.findings;
  }
}

/** Which declaration wins a name clash: lower is stronger. `cli` and `sdk` are explicit for this run. */
export const SCOPE_RANK: Record<McpServerScope, number> = { sdk: 0, cli: 1, local: 2, project: 3, user: 4, plugin: 5 };
