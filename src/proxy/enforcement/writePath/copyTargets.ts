/**
 * COPY statements as the data streams see them: `COPY … FROM STDIN` rows the client sends (the
 * analyser reports the target when it has protected columns), and `COPY … TO STDOUT` rows the
 * server sends, whose columns are known from the table and column list (CopyOutResponse carries
 * no table OIDs). `COPY (query) TO STDOUT` cannot be mapped: it is refused when the query names a
 * table whose columns this session may not see as stored.
 */
import type { CopyFromTarget, CopyOptions, CopyShape, ProtectedSchema } from '../../sql/index.js';
import { copyOptions, copyShape } from '../../sql/copyStatement.js';
import { findListedTableMention } from '../../sql/protectedNameScan.js';
import { parseSql } from '../../sql/sqlParser.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import { PolicyRefusal, unsupportedRefusal } from '../policyRefusal.js';
import { hasBinaryCodec, isTextLike } from '../valueCodecs/valueCodecs.js';
import type { ColumnPolicy, TableName } from '../../../policy/index.js';
import { sameColumnPolicy, type ReadActions } from '../readPath/resultPlan.js';

/** A COPY FROM STDIN of the statement; target undefined when no column needs rewriting. */
export interface CopyInStream {
  readonly direction: 'in';
  readonly target: CopyFromTarget | undefined;
  /** Set when the COPY must not load rows (see SessionSettings.preparedCopyRefusal): failed at its first message. */
  readonly refusal?: PolicyRefusal;
}

export interface CopyOutColumn {
  readonly policy: ColumnPolicy;
  readonly action: Exclude<ReturnType<ReadActions['of']>, 'pass'>;
  readonly index: number;
  readonly typeOid: number;
}

/** A COPY TO STDOUT of the statement; columns empty when no column needs rewriting. */
export interface CopyOutStream {
  readonly direction: 'out';
  readonly columnCount: number;
  readonly columns: readonly CopyOutColumn[];
  readonly options: CopyOptions | undefined;
  /** What the stream was planned under, and whether other policies (a reload) plan it alike. */
  readonly planned?: CopyOutPlanned;
}

export interface CopyOutPlanned {
  /** A name for messages: the table copied, or `(query)`. */
  readonly table: string;
  readonly under: ColumnPolicies;
  /**
   * The stream as other policies (a reload since) plan it; undefined when they refuse it. A COPY
   * prepared before a reload starts under the policies in force; one under way cannot change.
   */
  planUnder(policies: ColumnPolicies): CopyOutStream | undefined;
}

export type CopyStream = CopyInStream | CopyOutStream;

/** Parses the statement again: only for an analysis that does not carry its CopyShape. */
function copyShapeOf(statementText: string): CopyShape | undefined {
  const parsed = parseSql(statementText).stmts?.[0]?.stmt;
  return parsed !== undefined && 'CopyStmt' in parsed ? copyShape(parsed.CopyStmt) : undefined;
}

/**
 * The data stream a COPY statement opens, if any. `copyFrom` is the analyser's finding for the
 * statement, `shape` its CopyShape (StatementAnalysis.copy). Throws PolicyRefusal for COPY TO forms pgveil cannot rewrite for this session.
 */
export function copyStreamOf(
  statementText: string, copyFrom: CopyFromTarget | undefined, policies: ColumnPolicies, actions: ReadActions,
  schema: ProtectedSchema = policies, shape: CopyShape | undefined = copyShapeOf(statementText),
): CopyStream | undefined {
  const copy = shape;
  if (copy === undefined || !copy.stdio) return undefined;
  if (copy.from) return { direction: 'in', target: copyFrom };
  if (copy.query) return queryCopyOut(statementText, policies, actions);
  const relation = copy.relation;
  // An unqualified name resolves on the session's search_path (`schema`).
  const table = relation === undefined ? undefined : schema.resolveTable(relation.schema, relation.table);
  if (table?.refusal !== undefined) throw unsupportedRefusal(table.refusal);
  if (table === undefined) return { direction: 'out', columnCount: 0, columns: [], options: undefined };
  // Without a column list PostgreSQL copies every column but the generated ones.
  const generated = new Set(policies.relationOf(table)?.columns.filter((column) => column.generated === true).map((column) => column.name));
  const names = copy.columns ?? table.columns.filter((name) => !generated.has(name));
  return tableCopyOut(table, names, copy, policies, actions);
}

/** `COPY (query) TO STDOUT`: refused when the query names a table this session sees other than as stored. */
function queryCopyOut(statementText: string, policies: ColumnPolicies, actions: ReadActions): CopyOutStream {
  const named = revealedTableNamed(statementText, policies, actions);
  if (named !== undefined) {
    throw unsupportedRefusal(`pgveil refused the statement: COPY (query) TO STDOUT reads table ${named}, whose protected columns pgveil cannot map in a COPY of a query; use COPY table (columns) TO STDOUT or SELECT`);
  }
  const planned: CopyOutPlanned = { table: '(query)', under: policies, planUnder: (other) => refusedAsUndefined(() => queryCopyOut(statementText, other, actions)) };
  return { direction: 'out', columnCount: 0, columns: [], options: undefined, planned };
}

/** `COPY table (names) TO STDOUT`, planned under `policies`. */
function tableCopyOut(table: TableName, names: readonly string[], copy: CopyShape, policies: ColumnPolicies, actions: ReadActions): CopyOutStream {
  const columns = copyOutColumns(table, names, policies, actions);
  const planned: CopyOutPlanned = { table: table.table, under: policies, planUnder: (other) => refusedAsUndefined(() => tableCopyOut(table, names, copy, other, actions)) };
  if (columns.length === 0) return { direction: 'out', columnCount: names.length, columns, options: undefined, planned };
  let options: CopyOptions;
  try {
    options = copyOptions(copy.options);
  } catch {
    throw unsupportedRefusal(`pgveil refused the statement: COPY TO of table ${table.table} with options pgveil does not understand`);
  }
  if (options.format === 'binary') {
    for (const column of columns) {
      const fits = column.action === 'null' || column.action === 'unprotect' ? hasBinaryCodec(column.typeOid) : isTextLike(column.typeOid);
      if (!fits) {
        throw unsupportedRefusal(`pgveil refused the statement: binary COPY TO of table ${table.table}: column ${names[column.index] ?? ''} cannot be shown to this session in binary format (type ${column.typeOid}); use FORMAT text or csv`);
      }
    }
  }
  return { direction: 'out', columnCount: names.length, columns, options, planned };
}

function refusedAsUndefined(plan: () => CopyOutStream): CopyOutStream | undefined {
  try {
    return plan();
  } catch (error) {
    if (error instanceof PolicyRefusal) return undefined;
    throw error;
  }
}

/** Whether two plans of one COPY do the same to each column. */
export function sameCopyOut(a: CopyOutStream, b: CopyOutStream): boolean {
  return a.columnCount === b.columnCount && sameCopyOutColumns(a.columns, b.columns);
}

/** A table the text names whose protected columns this session sees other than as stored. */
function revealedTableNamed(statementText: string, policies: ColumnPolicies, actions: ReadActions): string | undefined {
  const revealing = new Set<string>();
  for (const policy of policies.policies.columns) if (actions.of(policy) !== 'pass') revealing.add(policy.table);
  return findListedTableMention(statementText, revealing);
}

/** The columns of a COPY of `names` from `table` that this session sees other than as stored, under `policies`. */
function copyOutColumns(table: TableName, names: readonly string[], policies: ColumnPolicies, actions: ReadActions): CopyOutColumn[] {
  const columns: CopyOutColumn[] = [];
  names.forEach((name, index) => {
    const policy = policies.policyOfColumn({ schema: table.schema, table: table.table, column: name });
    if (policy === undefined) return;
    const action = actions.of(policy);
    const typeOid = policies.relationOf(table)?.columns.find((column) => column.name === name)?.typeOid ?? 0;
    if (action !== 'pass') columns.push({ policy, action, index, typeOid });
  });
  return columns;
}

/** Whether two plans of a COPY's columns do the same to each column (a reload builds new, equal policies for what it left alone). */
function sameCopyOutColumns(a: readonly CopyOutColumn[], b: readonly CopyOutColumn[]): boolean {
  return a.length === b.length && a.every((column, i) => {
    const other = b[i] as CopyOutColumn;
    return column.index === other.index && column.action === other.action && column.typeOid === other.typeOid
      && sameColumnPolicy(column.policy, other.policy);
  });
}
