import type { JsonSchema, Tool } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { ToolContribution } from '@tessera/contracts';
import { fromJSONSchema, prettifyError, type ZodType } from 'zod';
import { CliUsageError } from '../args.js';

/** The tool the model answers through under `--json-schema` (Claude Code's name for it). */
export const STRUCTURED_OUTPUT_TOOL = 'StructuredOutput';

/**
 * How many times the model may fail to give a conforming answer in one turn (a call whose input
 * does not match the schema, or a reply that ends without calling the tool) before the turn ends
 * in `error_max_structured_output_retries`: the first attempt plus two retries.
 */
export const MAX_STRUCTURED_OUTPUT_ATTEMPTS = 3;

/** Appended to the system prompt under `--json-schema`. */
export const STRUCTURED_OUTPUT_INSTRUCTIONS = `When you have the final answer, call the ${STRUCTURED_OUTPUT_TOOL} tool exactly once with the answer as its input; the input must conform to the tool's JSON schema. Do not answer in plain text instead: your response is read only from that call, and the run ends when it is accepted.`;

/** The user message that gives the model another chance when a reply ended without the call. */
export const STRUCTURED_OUTPUT_REMINDER = `You ended your reply without calling the ${STRUCTURED_OUTPUT_TOOL} tool. Call ${STRUCTURED_OUTPUT_TOOL} now, once, with your final answer as input conforming to its JSON schema.`;

export interface StructuredOutputSchema {
  /** The schema as given: the tool's input schema. */
  schema: JsonSchema;
  /** zod's reading of it, which checks the model's input. */
  validator: ZodType;
}

/**
 * `--json-schema '<schema>'`: the JSON Schema of the final answer. It must be a JSON object
 * describing an object (`"type": "object"`, as a tool's input schema is) that zod can read;
 * anything else is a `CliUsageError` naming the flag (exit 1 before the run, as Claude Code).
 */
export function parseJsonSchemaFlag(text: string): StructuredOutputSchema {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(`Error: --json-schema is not valid JSON (${error instanceof Error ? error.message : String(error)}); pass a JSON Schema such as '{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}'.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CliUsageError(`Error: --json-schema must be a JSON Schema object, e.g. '{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}'.`);
  }
  const schema = parsed as Record<string, unknown>;
  if (schema.type !== 'object') {
    throw new CliUsageError(`Error: --json-schema must describe an object ("type": "object" at the top level, got ${schema.type === undefined ? 'no "type"' : `"type": ${JSON.stringify(schema.type)}`}); wrap another answer in a property, e.g. '{"type":"object","properties":{"items":{"type":"array"}},"required":["items"]}'.`);
  }
  let validator: ZodType;
  try {
    validator = fromJSONSchema(schema as Parameters<typeof fromJSONSchema>[0]);
  } catch (error) {
    throw new CliUsageError(`Error: --json-schema is not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { schema: schema as unknown as JsonSchema, validator };
}

/**
 * The `StructuredOutput` tool: its input schema is the `--json-schema`; input that does not
 * conform goes back to the model as an `invalid_input` error naming what is wrong. Only the
 * session `mainSessionId()` names may use it (a subagent's answer is not the run's answer).
 */
export function structuredOutputPlugin(structured: StructuredOutputSchema, mainSessionId: () => string | undefined): Plugin {
  const tool: Tool<unknown, { structuredOutput: unknown }> = {
    name: STRUCTURED_OUTPUT_TOOL,
    description: 'Returns your final answer as structured output. Call it once, at the end, with the answer as the input; the input must conform to this JSON schema.',
    parameters: structured.schema,
    validate(input) {
      const checked = structured.validator.safeParse(input);
      if (checked.success) return { success: true, data: input };
      return { success: false, message: `The input does not conform to the required JSON schema:\n${prettifyError(checked.error)}\nCall ${STRUCTURED_OUTPUT_TOOL} again with corrected input.` };
    },
    execute(input, context) {
      const main = mainSessionId();
      if (main !== undefined && context.sessionId !== main) {
        return { success: false, output: `${STRUCTURED_OUTPUT_TOOL} is for the main agent's final answer; reply to the agent that delegated this task instead.`, error: 'not the main session', errorCode: 'tool_error' };
      }
      return { success: true, output: 'Structured output accepted.', data: { structuredOutput: input } };
    },
  };
  return definePlugin({
    name: 'cli-structured-output',
    contributes: [ToolContribution],
    register({ bind }) {
      bind(ToolContribution).toConstantValue(tool as Tool);
    },
  });
}
