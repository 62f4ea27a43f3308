export { ApprovalRouter } from './approval-router.js';
export { kernelSessionFactory, type SessionDefaults, type SessionFactory, type SessionOpenOptions } from './session-factory.js';
