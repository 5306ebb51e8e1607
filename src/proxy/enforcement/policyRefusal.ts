/**
 * A statement, Bind or COPY row pgveil will not forward, with the SQLSTATE and message the client
 * gets. Messages name the column and the reason, never a value.
 */
import { errorResponse } from '../protocol/messages.js';
import { formatColumnName, type ColumnPolicy } from '../../policy/index.js';

export const UNSUPPORTED = '0A000';
export const INVALID_TEXT_REPRESENTATION = '22P02';

export class PolicyRefusal extends Error {
  constructor(readonly sqlState: string, message: string) {
    super(message);
    this.name = 'PolicyRefusal';
  }

  toErrorResponse(): Buffer {
    return errorResponse({ severity: 'ERROR', code: this.sqlState, message: this.message });
  }
}

export function columnLabel(policy: Pick<ColumnPolicy, 'schema' | 'table' | 'column'>): string {
  return formatColumnName({ schema: policy.schema, table: policy.table, column: policy.column });
}

/** A value that is not of its column's kind (or that pgveil cannot read in its wire format). */
export function valueRefusal(policy: ColumnPolicy, reason: string): PolicyRefusal {
  return new PolicyRefusal(INVALID_TEXT_REPRESENTATION, `pgveil refused the statement: protected column ${columnLabel(policy)}: ${reason}`);
}

export function unsupportedRefusal(message: string): PolicyRefusal {
  return new PolicyRefusal(UNSUPPORTED, message);
}
