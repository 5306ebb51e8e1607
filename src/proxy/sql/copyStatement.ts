/**
 * COPY. `COPY table FROM STDIN` into a table with protected columns is reported with its column
 * list and options so the caller can rewrite each data row; the forms whose rows never pass
 * through the proxy (a server file, PROGRAM) are refused for such tables.
 * `COPY (query) TO` is analysed as the query it runs.
 */
import type { CopyStmt, DefElem, Node } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import { analyseExpression } from './expressionAnalyser.js';
import { Scope } from './nameScope.js';
import { exposeResultColumns } from './plaintextExposure.js';
import { relationItem } from './queryAnalyser.js';
import { stringList } from './parseTree.js';
// The client's option text goes back quoted as a constant: the audit line keeps none of it (proxy.refused).
import { quoteLiteral } from './spliceLiterals.js';
import type { CopyColumn, CopyFormat, CopyOptions, CopyShape } from './sqlAnalysisTypes.js';
import { rejectColumn, rejectStatement } from './statementFindings.js';
import { misuseResultColumns } from './suppliedValues.js';

export function analyseCopy(copy: CopyStmt, context: AnalysisContext): void {
  if (copy.query !== undefined) {
    // No RowDescription names the columns of a COPY: even a bare column would go out unmasked.
    const outputs = context.subquery(copy.query, new Scope(undefined));
    exposeResultColumns(outputs, 'copy', context);
    misuseResultColumns(outputs, context);
    return;
  }
  const relation = copy.relation;
  if (relation === undefined || copy.is_from !== true) return;
  const info = context.relations.table(relation.schemaname, relation.relname ?? '');
  if (info === undefined) return;
  const scope = new Scope(undefined);
  scope.items.push(relationItem(relation, scope, context));
  analyseExpression(copy.whereClause, scope, 'predicate', context);

  const names = copy.attlist === undefined ? info.columns.map((column) => column.ref.column) : stringList(copy.attlist);
  const columns: CopyColumn[] = names.map((name) => {
    const known = info.columns.find((column) => column.ref.column === name);
    return { column: known?.ref ?? { schema: info.schema, table: info.table, column: name }, protected: known?.protected === true };
  });
  const firstProtected = columns.find((column) => column.protected);
  if (firstProtected === undefined) return;
  if (copy.filename !== undefined || copy.is_program === true) {
    rejectColumn(firstProtected.column, `COPY FROM ${copy.is_program === true ? 'PROGRAM' : 'a server file'} would load it without pgveil; use COPY … FROM STDIN`, relation.location);
  }
  const options = copyOptions(copy.options);
  context.findings.copyFrom = { schema: info.schema, table: info.table, columns, options };
}

/** The data-stream facts of a COPY statement, carried in its StatementAnalysis. */
export function copyShape(copy: CopyStmt): CopyShape {
  const relation = copy.relation;
  return {
    from: copy.is_from === true,
    stdio: copy.filename === undefined && copy.is_program !== true,
    query: copy.query !== undefined,
    relation: relation === undefined ? undefined : { schema: relation.schemaname, table: relation.relname ?? '' },
    columns: copy.attlist === undefined ? undefined : stringList(copy.attlist),
    options: copy.options,
  };
}

/** Options read below, and options that do not change how a data row is laid out. */
const KNOWN_OPTIONS = new Set([
  'format', 'delimiter', 'null', 'header', 'quote', 'escape', 'force_not_null', 'force_null', 'default',
  'freeze', 'on_error', 'log_verbosity', 'reject_limit', 'force_quote',
]);

/** The options as given, with PostgreSQL's defaults for the format; unknown options are refused. */
export function copyOptions(elements: readonly Node[] | undefined): CopyOptions {
  const given = new Map<string, DefElem>();
  for (const node of elements ?? []) {
    if ('DefElem' in node) given.set(node.DefElem.defname ?? '', node.DefElem);
  }
  for (const name of STRING_OPTIONS) {
    const element = given.get(name);
    if (element !== undefined) constantOption(element);
  }
  const format = formatOption(given.get('format'));
  const csv = format === 'csv';
  const quote = csv ? stringOption(given.get('quote')) ?? '"' : '';
  const options: CopyOptions = {
    format,
    delimiter: stringOption(given.get('delimiter')) ?? (csv ? ',' : '\t'),
    null: stringOption(given.get('null')) ?? (csv ? '' : '\\N'),
    header: headerOption(given.get('header')),
    quote,
    escape: csv ? stringOption(given.get('escape')) ?? quote : '',
    forceNotNull: columnListOption(given.get('force_not_null')),
    forceNull: columnListOption(given.get('force_null')),
    default: stringOption(given.get('default')),
  };
  for (const [name, element] of given) {
    if (name === 'encoding') {
      const encoding = (stringOption(element) ?? '').toLowerCase().replace(/[-_]/g, '');
      if (encoding !== 'utf8' && encoding !== 'unicode') {
        rejectStatement(`pgveil refused the statement: COPY with ENCODING ${quoteLiteral(stringOption(element) ?? '')} into a table with protected columns (pgveil rewrites rows as UTF-8)`, element.location);
      }
    } else if (!KNOWN_OPTIONS.has(name)) {
      rejectStatement(`pgveil refused the statement: COPY option ${name} is not understood for a table with protected columns`, element.location);
    }
  }
  return options;
}

/**
 * Options whose argument PostgreSQL reads as a string (defGetString). It reads more than a quoted
 * string: a star as `*`, a parenthesised list as its names joined by dots, a number as written
 * (`DELIMITER *`, `FORMAT (csv)`, `NULL 1.5`). pgveil must split rows as the server will, so such
 * an option must be a string constant or an integer; anything else is refused.
 */
const STRING_OPTIONS = ['format', 'delimiter', 'null', 'quote', 'escape', 'default', 'encoding'] as const;

function constantOption(element: DefElem): string {
  const argument = element.arg;
  if (argument !== undefined && 'String' in argument) return argument.String.sval ?? '';
  if (argument !== undefined && 'Integer' in argument) return String(argument.Integer.ival ?? 0);
  return rejectStatement(
    `pgveil refused the statement: COPY option ${element.defname ?? ''} must be a quoted string constant ('…') for a table with protected columns (pgveil must split rows as PostgreSQL will)`,
    element.location,
  );
}

function stringOption(element: DefElem | undefined): string | undefined {
  return element === undefined ? undefined : constantOption(element);
}

function formatOption(element: DefElem | undefined): CopyFormat {
  const format = (stringOption(element) ?? 'text').toLowerCase();
  if (format === 'text' || format === 'csv' || format === 'binary') return format;
  return rejectStatement(`pgveil refused the statement: COPY format ${quoteLiteral(format)} is not understood`, element?.location);
}

function headerOption(element: DefElem | undefined): boolean | 'match' {
  if (element === undefined) return false;
  const argument = element.arg;
  if (argument === undefined) return true;
  if ('Boolean' in argument) return argument.Boolean.boolval === true;
  if ('Integer' in argument) return (argument.Integer.ival ?? 0) !== 0;
  const text = (stringOption(element) ?? '').toLowerCase();
  if (text === 'match') return 'match';
  if (['true', 'on', 'yes', '1'].includes(text)) return true;
  if (['false', 'off', 'no', '0'].includes(text)) return false;
  return rejectStatement(`pgveil refused the statement: COPY HEADER ${quoteLiteral(text)} is not understood`, element.location);
}

function columnListOption(element: DefElem | undefined): readonly string[] | '*' {
  const argument = element?.arg;
  if (argument === undefined) return [];
  if ('A_Star' in argument) return '*';
  if ('List' in argument) return stringList(argument.List.items);
  return [];
}
