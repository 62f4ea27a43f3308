export { isChatEntry } from '@tessera/contracts';
export type { ICommandHostContext, ISystemCommand, PermissionMode, SessionEndReason } from '@tessera/contracts';
export type { Plugin } from '@tessera/kernel';
