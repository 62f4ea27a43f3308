import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { describeError, type ApprovalAnswer, type ApprovalHandler, type ApprovalRequest } from '@tessera/contracts';

/** The MCP request a permission ask belongs to: elicitations are sent in its context. */
export interface ApprovalCall {
  requestId: RequestId;
}

export interface McpApprovalsOptions {
  server: Server;
  /** The tool call running in the session now (undefined between calls: asks are refused). */
  currentCall: () => ApprovalCall | undefined;
  /** How long to wait for the user's answer to an elicitation. */
  timeoutMs: number;
}

const DECISIONS = [
  { const: 'allow', title: 'Allow once' },
  { const: 'allow_session', title: 'Allow for the rest of this session' },
  { const: 'deny', title: 'Deny' },
] as const;

/**
 * The `ApprovalHandler` of one session reached over MCP. When the client declared the
 * elicitation capability, each ask becomes an `elicitation/create` form (allow once, allow for
 * the session, deny, with an optional reason) sent in the context of the running tool call;
 * otherwise the ask is refused with a message naming the rule that would let the call run, so
 * the model (and the person reading its answer) knows what to add to the settings.
 */
export class McpApprovals implements ApprovalHandler {
  constructor(private readonly options: McpApprovalsOptions) {}

  async requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const rule = request.suggestedRule ?? request.toolName;
    const call = this.options.currentCall();
    if (!call) return { behavior: 'deny', message: `${request.toolName} needs approval, and no MCP tool call is running to ask through. ${howToAllow(rule)}` };
    if (!this.options.server.getClientCapabilities()?.elicitation?.form) {
      return {
        behavior: 'deny',
        message: `${request.toolName} needs approval, and this MCP client cannot answer permission prompts (it did not declare the elicitation capability). ${howToAllow(rule)}`,
      };
    }
    try {
      const answer = await this.options.server.elicitInput(
        {
          mode: 'form',
          message: `Tessera wants to run ${request.toolName}${describeInput(request.input)}. Allow it?${request.suggestedRule ? ` ("Allow for the rest of this session" remembers ${request.suggestedRule}.)` : ''}`,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: { type: 'string', title: 'Decision', oneOf: DECISIONS.map((choice) => ({ ...choice })), default: 'allow' },
              reason: { type: 'string', title: 'Reason (when denying)', description: 'Told to the agent' },
            },
            required: ['decision'],
          },
        },
        { relatedRequestId: call.requestId, signal: request.signal, timeout: this.options.timeoutMs },
      );
      if (answer.action !== 'accept') return { behavior: 'deny', message: `The user ${answer.action === 'decline' ? 'declined' : 'dismissed'} the permission prompt for ${request.toolName}.` };
      const decision = answer.content?.decision;
      if (decision === 'allow') return true;
      if (decision === 'allow_session') return 'allow-session';
      const reason = typeof answer.content?.reason === 'string' && answer.content.reason.trim() !== '' ? `: ${answer.content.reason.trim()}` : '.';
      return { behavior: 'deny', message: `The user denied ${request.toolName}${reason}` };
    } catch (error) {
      if (request.signal.aborted) return false;
      return { behavior: 'deny', message: `${request.toolName} was not approved: the permission prompt failed (${describeError(error)}). ${howToAllow(rule)}` };
    }
  }
}

function howToAllow(rule: string): string {
  return `To allow it without asking, add "${rule}" to permissions.allow in .tessera/settings.json (or start the server with --allowedTools "${rule}").`;
}

/** ` ("pwd")`: the call's main argument, short, for the prompt's one line. */
function describeInput(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const fields = input as Record<string, unknown>;
  const main = ['command', 'file_path', 'path', 'pattern', 'url'].map((key) => fields[key]).find((value) => typeof value === 'string');
  if (typeof main !== 'string') return '';
  return ` (${main.length > 200 ? `${main.slice(0, 199)}…` : main})`;
}
