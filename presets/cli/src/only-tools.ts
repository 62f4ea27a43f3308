import { definePlugin, Stage, type Plugin } from '@tessera/kernel';
import { copyWith } from '@tessera/contracts';

/** Just before `Stage.BeforeGuard` (Claude Code PreToolUse hooks), so before the permission guard too. */
export const ONLY_TOOLS_STAGE = Stage.BeforeGuard - 1;

/**
 * `--tools a b`: the model is offered only these tools (MCP tools, `mcp__…`, stay), and a call
 * to any other is refused, so a tool another plugin adds (a subagent or command tool) cannot
 * slip past the list. The model is answered as Claude Code answers a call to a tool it does not
 * have (`No such tool available: <Name>`), followed by why.
 */
export function onlyTools(names: readonly string[]): Plugin {
  const allowed = new Set(names);
  const kept = (name: string): boolean => allowed.has(name) || name.startsWith('mcp__');
  return definePlugin({
    name: 'cli-only-tools',
    register({ hooks }) {
      hooks.beforeProviderRequest.tap({ name: 'cli-only-tools', stage: Stage.Guard }, (context) => {
        const { request } = context;
        const tools = request.tools.filter((tool) => kept(tool.name));
        // The provider's hosted web search is not in `tools`; it is WebSearch as far as the list goes.
        const noWebSearch = !allowed.has('WebSearch') && request.nativeTools?.webSearch !== false;
        if (tools.length === request.tools.length && !noWebSearch) return undefined;
        return { request: copyWith(request, { tools, ...(noWebSearch ? { nativeTools: { ...request.nativeTools, webSearch: false } } : {}) }) };
      });
      // Before PreToolUse hooks and the permission guard: a tool outside the list is no tool of
      // this session, so nobody is asked about it (an approval would not make it run).
      hooks.preToolUse.tap({ name: 'cli-only-tools', stage: ONLY_TOOLS_STAGE }, ({ toolName }) =>
        kept(toolName) ? undefined : { decision: 'deny', reason: noSuchTool(toolName, names), source: 'cli', verbatim: true },
      );
    },
  });
}

/** The tool result the model gets for a call outside `--tools`. */
export function noSuchTool(toolName: string, names: readonly string[]): string {
  return `No such tool available: ${toolName}. This session may use only the tools given to --tools (${names.join(', ') || 'none'}) and MCP tools.`;
}
