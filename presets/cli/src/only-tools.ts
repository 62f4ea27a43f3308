import { definePlugin, Stage, type Plugin } from '@tessera/kernel';
import { copyWith } from '@tessera/contracts';

/**
 * `--tools a b`: the model is offered only these tools (MCP tools, `mcp__…`, stay), and a call
 * to any other is refused, so a tool another plugin adds (a subagent or command tool) cannot
 * slip past the list.
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
      hooks.preToolUse.tap({ name: 'cli-only-tools', stage: Stage.Guard }, ({ toolName }) =>
        kept(toolName) ? undefined : { decision: 'deny', reason: `${toolName} is not among the tools this session may use (--tools ${names.join(' ') || '""'})`, source: 'cli' },
      );
    },
  });
}
