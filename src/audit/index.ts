export {
  auditedAccountName, AuditWriteError, createAuditLog, NO_AUDIT, recordUnlessUnwritable,
  type AccountChanges, type AuditCounters, type AuditDestination, type AuditEvent, type AuditLog,
} from './auditLog.js';
export { accountChanges, policyDigest, policyReloadAudit, type PolicyReloadAudit } from './reloadAudit.js';
