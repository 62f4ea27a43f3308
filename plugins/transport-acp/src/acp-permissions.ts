import type * as acp from '@agentclientprotocol/sdk';
import type { ApprovalAnswer, ApprovalRequest } from '@tessera/contracts';
import { toolCallStart } from './acp-updates.js';

/** The option ids Tessera offers in `session/request_permission`. */
export const PERMISSION_OPTION = { allowOnce: 'allow_once', allowAlways: 'allow_always', rejectOnce: 'reject_once' } as const;

/**
 * A Tessera approval ask as an ACP permission request. The tool call carries the same id,
 * title, kind, input and diff as the `tool_call` update the client already has, so a client
 * that only reads the request still shows what is asked.
 */
export function permissionRequest(sessionId: string, request: ApprovalRequest): acp.RequestPermissionRequest {
  const { sessionUpdate: _update, ...toolCall } = toolCallStart(request.toolCallId, request.toolName, request.input, 'pending');
  const always = request.suggestedRule === undefined ? `Always allow ${request.toolName} in this session` : `Always allow ${request.suggestedRule} in this session`;
  return {
    sessionId,
    toolCall,
    options: [
      { optionId: PERMISSION_OPTION.allowOnce, name: 'Allow', kind: 'allow_once' },
      { optionId: PERMISSION_OPTION.allowAlways, name: always, kind: 'allow_always' },
      { optionId: PERMISSION_OPTION.rejectOnce, name: 'Reject', kind: 'reject_once' },
    ],
  };
}

/**
 * The client's answer as Tessera's: allow once → `true`; allow always → `allow-session` (the
 * suggested rule is remembered for the rest of the session, never written to settings);
 * reject, a cancelled request or an option Tessera did not offer → a refusal whose message
 * the model reads.
 */
export function approvalAnswer(response: acp.RequestPermissionResponse): ApprovalAnswer {
  const outcome = response.outcome;
  if (outcome.outcome === 'cancelled') return { behavior: 'deny', message: 'The permission request was cancelled in the editor, so the call did not run.' };
  switch (outcome.optionId) {
    case PERMISSION_OPTION.allowOnce:
      return true;
    case PERMISSION_OPTION.allowAlways:
      return 'allow-session';
    case PERMISSION_OPTION.rejectOnce:
      return { behavior: 'deny', message: 'The user rejected this tool call in the editor.' };
    default:
      return { behavior: 'deny', message: `The editor answered with an unknown permission option "${outcome.optionId}", so the call did not run.` };
  }
}
