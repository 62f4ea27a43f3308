/** Real-time tool events for UIs (spec: ISessionOptions.onToolExecution). */
export type ToolExecutionEvent =
  | { type: 'start'; toolName: string; toolArgs: unknown; toolCallId: string }
  | {
      type: 'end';
      toolName: string;
      toolArgs: unknown;
      toolCallId: string;
      success: boolean;
      denied?: boolean;
      errorCode?: string;
      /** Serialised result payload for display (e.g. Edit start lines). */
      toolResultData?: unknown;
    };
