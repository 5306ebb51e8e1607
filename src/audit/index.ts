export { auditedAccountName, createAuditLog, NO_AUDIT, type AuditCounters, type AuditDestination, type AuditEvent, type AuditLog } from './auditLog.js';
