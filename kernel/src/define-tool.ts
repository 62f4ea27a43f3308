import type { JsonSchema, Tool, ToolContext, ToolInputCheck, ToolPermission, ToolResult } from '@tessera/contracts';
import { ToolContribution } from '@tessera/contracts';
import { definePlugin, type Plugin } from './plugin.js';

/** The parts of a zod 4 schema `defineTool` uses (kept structural so the kernel never imports zod). */
export interface ZodLikeSchema<T> {
  /** Validates `input`; never throws. */
  safeParse(input: unknown): { success: true; data: T } | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };
  /** The schema as JSON Schema (zod 4's `z.toJSONSchema`, bound to this schema). */
  toJSONSchema(params?: unknown): Record<string, unknown>;
}

/** What `defineTool` takes: a tool with a zod schema for its input. `name` must be 1–64 letters, digits, `_` or `-`. */
export interface ToolDefinition<TInput, TData> {
  name: string;
  description: string;
  inputSchema: ZodLikeSchema<TInput>;
  /** See `Tool.maxResultChars`. */
  maxResultChars?: number;
  /** See `Tool.permission`: how permission rules judge a tool they do not know by name. */
  permission?: ToolPermission;
  /** Runs the tool on input that passed the schema; see `Tool.execute`. */
  execute(input: TInput, context: ToolContext): Promise<ToolResult<TData>> | ToolResult<TData>;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function formatIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

/**
 * A tool from a zod schema: the JSON Schema for providers is derived once, on first use,
 * and model input is validated before `execute` sees it.
 */
export function defineTool<TInput, TData = unknown>(definition: ToolDefinition<TInput, TData>): Tool<TInput, TData> {
  if (!TOOL_NAME.test(definition.name)) {
    throw new TypeError(
      `Tool name "${definition.name}" is invalid: use 1–64 letters, digits, "_" or "-" (providers reject anything else).`,
    );
  }
  let parameters: JsonSchema | undefined;
  return {
    name: definition.name,
    description: definition.description,
    get parameters(): JsonSchema {
      if (!parameters) {
        const { $schema: _schema, ...rest } = definition.inputSchema.toJSONSchema();
        parameters = rest;
      }
      return parameters;
    },
    validate(input: unknown): ToolInputCheck<TInput> {
      const parsed = definition.inputSchema.safeParse(input);
      return parsed.success
        ? { success: true, data: parsed.data }
        : { success: false, message: formatIssues(parsed.error.issues) };
    },
    ...(definition.maxResultChars === undefined ? {} : { maxResultChars: definition.maxResultChars }),
    ...(definition.permission === undefined ? {} : { permission: definition.permission }),
    execute: definition.execute,
  };
}

let anonymousToolsPlugins = 0;

/** A plugin contributing the given tools: `createKernel({ plugins: [...testPreset(), toolsPlugin(echo)] })`. */
export function toolsPlugin(...tools: Tool[]): Plugin;
export function toolsPlugin(options: { name: string }, ...tools: Tool[]): Plugin;
export function toolsPlugin(...args: Array<Tool | { name: string }>): Plugin {
  const first = args[0];
  const named = first !== undefined && !('execute' in first);
  const tools = (named ? args.slice(1) : args) as Tool[];
  anonymousToolsPlugins += 1;
  const name = named
    ? (first as { name: string }).name
    : `tools:${tools.map((tool) => tool.name).join(',') || anonymousToolsPlugins}`;
  return definePlugin({
    name,
    contributes: [ToolContribution],
    register({ bind }) {
      for (const tool of tools) bind(ToolContribution).toConstantValue(tool);
    },
  });
}
