export { ApprovalRouter } from './approval-router.js';
export type { SessionFactory, SessionOpenOptions } from './session-factory.js';
