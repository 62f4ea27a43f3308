import { diagnosticReport, type DiagnosticReport, type McpServerDeclaration, type McpServerSource } from '@tessera/contracts';
import { SCOPE_RANK } from './config-sources.js';
import { describe } from './mcp-errors.js';
import type { McpProjectApproval, McpProjectApprovalSettings } from './mcp-types.js';
import { serverKey } from './tool-names.js';

/**
 * Every source's declarations for one session, one per name: on a clash the stronger scope
 * wins (`SCOPE_RANK`) and the other is reported as shadowed. A source that throws, or whose
 * diagnostics throw, is reported and skipped; the others still count.
 */
export async function gatherDeclarations(
  sources: readonly McpServerSource[],
  session: { readonly sessionId: string; readonly cwd: string },
  report: (entry: DiagnosticReport) => void,
): Promise<McpServerDeclaration[]> {
  const winners = new Map<string, McpServerDeclaration>();
  for (const source of sources) {
    let declared: unknown = [];
    try {
      declared = await source.servers(session);
    } catch (error) {
      report({ severity: 'error', code: 'TESSERA_MCP_SOURCE', message: `MCP server source "${source.name}" failed: ${describe(error)}` });
    }
    try {
      for (const diagnostic of source.diagnostics?.() ?? []) report(diagnosticReport(diagnostic, 'TESSERA_MCP_CONFIG', 'mcp'));
    } catch {
      // A source whose diagnostics throw has nothing more to say.
    }
    for (const declaration of Array.isArray(declared) ? (declared as McpServerDeclaration[]) : []) {
      const key = serverKey(declaration);
      const current = winners.get(key);
      if (!current) {
        winners.set(key, declaration);
        continue;
      }
      const [kept, dropped] = SCOPE_RANK[current.scope] <= SCOPE_RANK[declaration.scope] ? [current, declaration] : [declaration, current];
      report({ severity: 'info', code: 'TESSERA_MCP_SHADOWED', message: `MCP server "${dropped.name}" from ${dropped.file ?? dropped.scope} (${dropped.scope}) is shadowed by the ${kept.scope} one${kept.file ? ` in ${kept.file}` : ''}.` });
      winners.set(key, kept);
    }
  }
  return [...winners.values()];
}

/**
 * Whether a `.mcp.json` server may start: `disabledMcpjsonServers` denies; `enableAllProjectMcpServers`
 * or `enabledMcpjsonServers` approves; a callback decides for itself; a server approved at run time
 * for this project (`approvedHere`) turns `pending` into `approved`. A callback that throws leaves
 * the server pending.
 */
export function projectApproval(
  approval: McpProjectApprovalSettings | McpProjectApproval | undefined,
  declaration: McpServerDeclaration,
  cwd: string,
  approvedHere: boolean,
  report: (entry: DiagnosticReport) => void,
): 'approved' | 'denied' | 'pending' {
  let decision: 'approved' | 'denied' | 'pending' = 'pending';
  if (typeof approval === 'function') {
    try {
      decision = approval({ name: declaration.name, cwd, ...(declaration.file ? { file: declaration.file } : {}) });
    } catch (error) {
      report({ severity: 'error', code: 'TESSERA_MCP_APPROVAL', message: `Approving MCP server "${declaration.name}" failed: ${describe(error)}; it stays unapproved.` });
    }
  } else if (approval) {
    if (approval.disabledMcpjsonServers?.includes(declaration.name)) decision = 'denied';
    else if (approval.enableAllProjectMcpServers === true || approval.enabledMcpjsonServers?.includes(declaration.name)) decision = 'approved';
  }
  return decision === 'pending' && approvedHere ? 'approved' : decision;
}
