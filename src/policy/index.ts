/** The column-policy module's public surface: what the proxy and the CLI use. */
export { readCatalogTables, type CatalogColumn, type CatalogQuery, type CatalogRow, type CatalogTable } from './catalogReader.js';
export { connectCatalog, pgCatalogQuery, type CatalogConnection, type CatalogTarget } from './catalogConnection.js';
export { checkAgainstCatalog, validateAgainstCatalog, type CatalogCheck } from './catalogValidation.js';
export type { ColumnType, TypeFamily } from './columnType.js';
export {
  PolicyError, errorsOf, formatPolicyIssue, inFileOrder, warningsOf, type IssueSeverity, type PolicyIssue,
} from './policyError.js';
export { policyPathText } from './issueCollector.js';
export { renderIssues, renderPolicyTable } from './policyReport.js';
export { loadPolicyFile, parsePolicies, readPolicyFile, readPolicyText, type PolicyReadResult } from './policyParser.js';
export { createPolicySet } from './policySet.js';
export {
  loadAndValidatePolicies, openPolicyStore,
  type PolicyStore, type PolicyStoreOptions, type ReloadOutcome,
} from './policyStore.js';
export {
  DEFAULT_VIEW, OTHER_ROLES, REVEAL_VIEWS, STATEMENT_PRIVILEGES, type StatementPrivilege,
  type ColumnEngineOptions, type ColumnPolicy, type PolicySet, type PolicySource, type RevealView, type TableName,
} from './policyTypes.js';
export { ApiRights, needsApiRight, type ApiOperation, type ApiRight } from './apiRights.js';
export { renderRoleRights } from './roleReport.js';
export {
  readUpstreamRoleFacts, upstreamPrivilegeReport, type AccountLogin, type PrivilegeReport, type UpstreamRoleFacts,
} from './upstreamPrivileges.js';
export { findCodeOnProtectedTables, renderCodeFindings, type CodeFinding } from './codeFindings.js';
export { columnsWithoutPlaintext, lacksPlaintextSomewhere } from './plaintextReach.js';
export {
  formatColumnName, formatTableName, parseColumnName, quoteIdentifier, type ColumnName,
} from './qualifiedName.js';
export {
  effectiveView, maskOptions, readAction, readActionFor, resolveView, viewOfRole, type ReadAction,
} from './revealView.js';
export { connectQuietly, describeDatabaseUrl, pgSslOption, upstreamSslOption } from './upstreamClient.js';
export { qualifiedTableSql, sqlIdentifier } from './sqlNames.js';
