import { policyPathText } from './issueCollector.js';
import { findSimilarTables, readCatalogTables, tableKey, type CatalogQuery, type CatalogTable } from './catalogReader.js';
import type { IssueSeverity, PolicyIssue } from './policyError.js';
import type { ColumnPolicy } from './policyTypes.js';
import { formatTableName, quoteIdentifier } from './qualifiedName.js';
import { checkStorage } from './storageRules.js';

/** Relation kinds whose columns store values the proxy sees in RowDescription. */
const STORED_RELKINDS = new Set(['r', 'p', 'm', 'f']);
const MAX_LISTED_COLUMNS = 20;

function issueAt(policy: ColumnPolicy, severity: IssueSeverity, message: string): PolicyIssue {
  return {
    file: policy.source.file,
    line: policy.source.line,
    column: policy.source.column,
    path: policyPathText(['columns', policy.key]),
    message,
    severity,
  };
}

async function unknownTable(query: CatalogQuery, policy: ColumnPolicy, hints: Map<string, string>): Promise<string> {
  const name = formatTableName(policy.schema, policy.table);
  let hint = hints.get(name);
  if (hint === undefined) {
    const similar = await findSimilarTables(query, policy.table);
    hint = similar.length > 0
      ? `; did you mean ${similar.map((t) => formatTableName(t.schema, t.table)).join(' or ')}? (names with capitals are written in double quotes)`
      : '';
    hints.set(name, hint);
  }
  return `table ${name} does not exist${hint}`;
}

function unknownColumn(policy: ColumnPolicy, table: CatalogTable): string {
  const name = formatTableName(policy.schema, policy.table);
  const names = [...table.columns.keys()];
  const sameLetters = names.find((c) => c.toLowerCase() === policy.column.toLowerCase());
  if (sameLetters !== undefined) {
    return `column ${quoteIdentifier(policy.column)} does not exist in ${name}; did you mean ${quoteIdentifier(sameLetters)}? `
      + '(names with capitals are written in double quotes)';
  }
  const listed = names.slice(0, MAX_LISTED_COLUMNS).map(quoteIdentifier).join(', ');
  const more = names.length > MAX_LISTED_COLUMNS ? `, … (${names.length} in all)` : '';
  return `column ${quoteIdentifier(policy.column)} does not exist in ${name}; its columns: ${listed}${more}`;
}

export interface CatalogCheck {
  readonly issues: readonly PolicyIssue[];
  /** Each existing column's type as format_type prints it, by the policy's key. */
  readonly columnTypes: ReadonlyMap<string, string>;
}

/**
 * Checks each policy against the live catalog (pg_namespace, pg_class, pg_attribute, pg_type):
 * that its table and column exist, and that what the method stores fits the column's type
 * (storageRules.ts). Issues point at the column's key in the policy file.
 */
export async function validateAgainstCatalog(
  policies: { readonly columns: readonly ColumnPolicy[] },
  query: CatalogQuery,
): Promise<PolicyIssue[]> {
  return [...(await checkAgainstCatalog(policies, query)).issues];
}

/** validateAgainstCatalog, also returning the column types found (for `pgveil policy check`). */
export async function checkAgainstCatalog(
  policies: { readonly columns: readonly ColumnPolicy[] },
  query: CatalogQuery,
): Promise<CatalogCheck> {
  const issues: PolicyIssue[] = [];
  const columnTypes = new Map<string, string>();
  const wanted = new Map<string, { schema: string; table: string }>();
  for (const p of policies.columns) wanted.set(tableKey(p.schema, p.table), { schema: p.schema, table: p.table });
  const tables = await readCatalogTables(query, [...wanted.values()]);
  const hints = new Map<string, string>();
  for (const policy of policies.columns) {
    const table = tables.get(tableKey(policy.schema, policy.table));
    if (!table) {
      issues.push(issueAt(policy, 'error', await unknownTable(query, policy, hints)));
      continue;
    }
    if (!STORED_RELKINDS.has(table.relkind)) {
      const what = table.relkind === 'v' ? 'a view' : 'not a table';
      issues.push(issueAt(policy, 'error', `${formatTableName(policy.schema, policy.table)} is ${what}: pgveil finds result columns `
        + 'by the table that stores them; put the policy on the column of the underlying table'));
      continue;
    }
    const column = table.columns.get(policy.column);
    if (!column) {
      issues.push(issueAt(policy, 'error', unknownColumn(policy, table)));
      continue;
    }
    columnTypes.set(policy.key, column.type.display);
    for (const finding of await checkStorage(policy, column.type)) {
      issues.push(issueAt(policy, finding.severity, finding.message));
    }
  }
  return { issues, columnTypes };
}
