import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The real Claude Agent SDK lives in its own npm folder (test/agent-sdk, not a workspace
// member), so it is installed on demand and typed here by the few shapes the acceptance test
// touches — the SDK's own .d.ts is never part of the type-check. Field names follow its
// sdk.d.ts (0.3.332); see PROTOCOL.md for the wire they travel on.

export const SDK_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(SDK_DIR, '..', '..');
/**
 * The executable under test. `AGENT_SDK_CLI` points the same tests at another CLI — e.g. the
 * real Claude Code binary the SDK ships — to check the tests themselves against the reference.
 */
export const TESSERA_BIN = process.env.AGENT_SDK_CLI ?? join(REPO_ROOT, 'presets', 'cli', 'bin', 'tessera.js');

/** Any line the SDK yields: it passes the CLI's stdout objects through unchanged. */
export interface SdkMessage {
  type: string;
  subtype?: string;
  session_id?: string;
  uuid?: string;
  parent_tool_use_id?: string | null;
  message?: { role?: string; content?: unknown };
  [field: string]: unknown;
}

export interface SdkUserMessage {
  type: 'user';
  message: { role: 'user'; content: string };
  parent_tool_use_id: null;
  session_id: string;
}

export type PermissionResult =
  | { behavior: 'allow'; updatedInput?: Record<string, unknown> }
  | { behavior: 'deny'; message: string; interrupt?: boolean };

export interface CanUseToolOptions {
  signal: AbortSignal;
  toolUseID: string;
  suggestions?: unknown[];
  decisionReason?: string;
  requestId?: string;
}

export type CanUseTool = (toolName: string, input: Record<string, unknown>, options: CanUseToolOptions) => Promise<PermissionResult>;

/** The fields of a hook input the tests read (the SDK's `PreToolUseHookInput`). */
export interface HookInput {
  hook_event_name: string;
  session_id: string;
  cwd: string;
  transcript_path?: string;
  permission_mode?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
}

export type HookCallback = (input: HookInput, toolUseID: string | undefined, options: { signal: AbortSignal }) => Promise<Record<string, unknown>>;

export interface QueryOptions {
  pathToClaudeCodeExecutable: string;
  cwd: string;
  env: Record<string, string | undefined>;
  canUseTool?: CanUseTool;
  hooks?: Partial<Record<string, Array<{ matcher?: string; hooks: HookCallback[]; timeout?: number }>>>;
  stderr?: (data: string) => void;
}

export interface Query extends AsyncGenerator<SdkMessage, void> {
  interrupt(): Promise<unknown>;
  close(): void;
}

export interface AgentSdk {
  query(params: { prompt: string | AsyncIterable<SdkUserMessage>; options: QueryOptions }): Query;
}

function needsInstall(): boolean {
  const installed = join(SDK_DIR, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) return true;
  return statSync(join(SDK_DIR, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs;
}

/**
 * Installs test/agent-sdk from its lockfile when node_modules is missing or older than it.
 * Optional dependencies (the SDK's ~200 MB native Claude Code binaries) are left out: the
 * tests always pass `pathToClaudeCodeExecutable`.
 */
export function installAgentSdk(): void {
  if (!needsInstall()) return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const install = spawnSync(npm, ['ci', '--omit=optional', '--no-audit', '--no-fund'], {
    cwd: SDK_DIR,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (install.status !== 0) {
    throw new Error(`Installing the Agent SDK in ${SDK_DIR} failed (${install.error?.message ?? `exit ${install.status}`}): ${install.stderr}. Run "npm ci" there by hand to see why.`);
  }
}

export async function loadAgentSdk(): Promise<AgentSdk> {
  const entry = join(SDK_DIR, 'node_modules', '@anthropic-ai', 'claude-agent-sdk', 'sdk.mjs');
  return (await import(pathToFileURL(entry).href)) as AgentSdk;
}

/** Fails early, with the fix, when the CLI's program has not been built. */
export function assertCliBuilt(): void {
  if (process.env.AGENT_SDK_CLI) return;
  const program = join(REPO_ROOT, 'presets', 'cli', 'dist', 'main.js');
  if (!existsSync(program)) throw new Error(`${program} is missing: the tessera bin runs the built CLI. Run "npm run build" at the repository root first.`);
}

/** Drains a query; an error thrown by the SDK is returned, not thrown, so tests can report it next to the messages. */
export async function collect(query: Query, onMessage?: (message: SdkMessage) => void): Promise<{ messages: SdkMessage[]; error: unknown }> {
  const messages: SdkMessage[] = [];
  try {
    for await (const message of query) {
      messages.push(message);
      onMessage?.(message);
    }
    return { messages, error: undefined };
  } catch (error) {
    return { messages, error };
  } finally {
    query.close();
  }
}

/** The content blocks of an SDK or API message, whether `content` is a string or an array. */
export function blocksOf(content: unknown): Array<Record<string, unknown>> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [];
}

/** The text of a `tool_result` block, flattening the array form. */
export function toolResultText(block: Record<string, unknown>): string {
  return blocksOf(block.content)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** Every `tool_result` block in an Anthropic Messages API request body, by tool_use_id. */
export function toolResultsInRequest(body: unknown): Map<string, Record<string, unknown>> {
  const results = new Map<string, Record<string, unknown>>();
  const messages = (body as { messages?: Array<{ content?: unknown }> }).messages ?? [];
  for (const message of messages) {
    for (const block of blocksOf(message.content)) {
      if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') results.set(block.tool_use_id, block);
    }
  }
  return results;
}
