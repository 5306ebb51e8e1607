/**
 * A value written into a protected column (INSERT … VALUES, UPDATE … SET, ON CONFLICT … SET,
 * MERGE): a parameter or constant (plain casts allowed), or a derived column passing them through
 * (`SET ssn = v.ssn` over a VALUES list), is mapped to the column; NULL, DEFAULT and
 * the column's own current value (`ssn = ssn`, `ssn = EXCLUDED.ssn`) carry nothing new; anything
 * else could put plaintext (or another policy's token) into the column and is refused.
 */
import type { Node } from 'libpg-query';
import type { AnalysisContext } from './analysisContext.js';
import type { Scope } from './nameScope.js';
import { operandOf, operandPosition, recordLiteral, unprotectableReason } from './operands.js';
import { columnName, sameColumn, sameStoredColumn } from './relationLookup.js';
import type { ColumnRef } from './sqlAnalysisTypes.js';
import { rejectColumn } from './statementFindings.js';
import { feedSupplied } from './suppliedValues.js';
import { nodeLocation } from './parseTree.js';

export function assignValue(column: ColumnRef, node: Node, scope: Scope, context: AnalysisContext): void {
  const value = operandOf(node, scope, context);
  switch (value.kind) {
    case 'param': return context.findings.addParam(value.param, column, nodeLocation(value.node));
    case 'literal': return recordLiteral(value.constant, column, context);
    case 'supplied': return feedSupplied(value.source, column, operandPosition(value), context);
    case 'null':
    case 'default': return;
    case 'protected':
      if (sameStoredColumn(value.column, column)) return;
      if (sameColumn(value.column, column)) {
        return rejectColumn(column, `the value assigned to it is read through another spelling of its table's name, or one another relation may take, so the server may read another table's column; spell the name alike on both sides`, operandPosition(value));
      }
      return rejectColumn(column, `the value assigned to it comes from protected column ${columnName(value.column)}, whose policy may differ`, operandPosition(value));
    default:
      return rejectColumn(column, `the value assigned to it is ${unprotectableReason(value)}`, operandPosition(value));
  }
}
