import {
  SandboxPaths,
  SandboxToolFactory,
  ShellDirectories,
  serviceOverride,
  TesseraError,
  type SandboxToolRequest,
  type SandboxToolSet,
  type Tool,
} from '@tessera/contracts';
import { ContainerSessionServices, definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import type { BashToolOptions } from './bash-tool.js';
import { DEFAULT_SANDBOX_ROOT, type Own } from './common-options.js';
import type { ReadToolOptions } from './read-tool.js';
import type { ISandboxClient } from './sandbox/sandbox-client.js';
import { checkSandboxRoot } from './sandbox-root.js';
import { ToolSessionStateToken } from './session-state.js';
import { buildBashTool, buildEditTool, buildReadTool, buildWriteTool, shellDirectoriesOf, stateGetter, type ServiceLookup, type ToolServices } from './tool-builders.js';

/** The tools a sandbox client can run: the ones that run commands or touch files. */
export type SandboxToolName = 'Bash' | 'Read' | 'Write' | 'Edit';

export const SANDBOX_TOOL_NAMES: readonly SandboxToolName[] = ['Bash', 'Read', 'Write', 'Edit'];

/** Tools a sandbox has no use for: a sandboxed Bash refuses background commands, so there are none to read or stop. */
export const SANDBOX_UNAVAILABLE_TOOL_NAMES: readonly ('BashOutput' | 'KillShell')[] = ['BashOutput', 'KillShell'];

const PLUGIN_NAME = 'tool-sandbox-factory';
const CLIENT_METHODS = ['run', 'readFile', 'writeFile', 'stat', 'mkdir'] as const;

export interface SandboxToolFactoryOptions {
  /** Workspace root inside the sandbox when the request names none. Default `/workspace`. */
  root?: string;
  /** Options of the sandboxed Bash (as `builtinTools({ bash })` takes them). */
  bash?: Own<BashToolOptions>;
  /** Options of the sandboxed Read. */
  read?: Own<ReadToolOptions>;
  /** The tools built (default all four): leave out the ones the kernel does not offer. */
  tools?: readonly SandboxToolName[];
}

/** The client, checked against the tools' port; a typed error naming what is missing otherwise. */
function sandboxClientOf(client: unknown): ISandboxClient {
  const missing = CLIENT_METHODS.filter((method) => typeof (client as Record<string, unknown> | null)?.[method] !== 'function');
  if (missing.length > 0) {
    throw new TesseraError(
      `The sandboxClient cannot run the session's tools: it has no ${missing.join(', ')}. Give a full ISandboxClient (InMemorySandboxClient, E2BSandboxClient or your own adapter from @tessera/plugin-tools), or no sandboxClient.`,
      { code: 'invalid_sandbox_client', category: 'configuration', recoverable: false, details: { missing } },
    );
  }
  return client as ISandboxClient;
}

/**
 * Binds `SandboxToolFactory`: for each session given a sandbox client (`new InteractiveSession({
 * kernel, sandboxClient })`), Bash, Read, Write and Edit routed through that client, built by the
 * same code as `builtinTools({ sandbox })` builds them, with the session's `SandboxPaths` and
 * `ShellDirectories` (the shell's directory inside the sandbox), and BashOutput and KillShell
 * to remove (`SANDBOX_UNAVAILABLE_TOOL_NAMES`), which a kernel-wide sandbox does not offer. `builtinTools()` adds it when it
 * is composed without a sandbox. Requires `ToolSessionStateToken` (the kernel's tool state, which
 * the sandboxed tools share with the host ones; an ended session's entry is dropped there).
 */
export function sandboxToolFactoryPlugin(options: SandboxToolFactoryOptions = {}): Plugin {
  const defaultRoot = options.root ?? DEFAULT_SANDBOX_ROOT;
  checkSandboxRoot(defaultRoot, (problem) => new PluginOptionsError('sandboxToolFactoryPlugin', PLUGIN_NAME, 'root', problem));
  const unknown = (options.tools ?? []).filter((name) => !SANDBOX_TOOL_NAMES.includes(name));
  if (unknown.length > 0) {
    throw new PluginOptionsError('sandboxToolFactoryPlugin', PLUGIN_NAME, 'tools', `names no sandboxed tool: ${unknown.map((name) => JSON.stringify(name)).join(', ')} (they are ${SANDBOX_TOOL_NAMES.join(', ')})`);
  }
  const built = new Set<SandboxToolName>(options.tools ?? SANDBOX_TOOL_NAMES);
  return definePlugin({
    name: PLUGIN_NAME,
    provides: [SandboxToolFactory],
    requires: [ToolSessionStateToken],
    register({ bind }) {
      bind(SandboxToolFactory).toDynamicValue((container) => ({
        create(request: SandboxToolRequest): SandboxToolSet {
          const client = sandboxClientOf(request.client);
          const root = request.root ?? defaultRoot;
          checkSandboxRoot(root, (problem) => new TesseraError(`The sandbox root ${problem}.`, { code: 'invalid_sandbox_root', category: 'configuration', recoverable: false, details: { root } }));
          // Looked up when first used, as the tool plugins' own instances do.
          const lookedUp = new ContainerSessionServices(container);
          const lookup: ServiceLookup = (token) => lookedUp.getOptional(token);
          const services: ToolServices = { lookup, state: stateGetter(undefined, lookup) };
          const sandbox = { sandbox: { client, root } };
          const tools: Tool[] = [];
          if (built.has('Bash')) tools.push(buildBashTool({ ...options.bash, ...sandbox }, services) as Tool);
          if (built.has('Read')) tools.push(buildReadTool({ ...options.read, ...sandbox }, services) as Tool);
          if (built.has('Write')) tools.push(buildWriteTool(sandbox, services) as Tool);
          if (built.has('Edit')) tools.push(buildEditTool(sandbox, services) as Tool);
          return {
            tools,
            services: [serviceOverride(SandboxPaths, { root }), serviceOverride(ShellDirectories, shellDirectoriesOf(services.state, true))],
            // As `builtinTools({ sandbox })` leaves them out, the session does not offer the host ones.
            removeTools: SANDBOX_UNAVAILABLE_TOOL_NAMES,
          };
        },
      }));
    },
  });
}
