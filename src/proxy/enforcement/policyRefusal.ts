/**
 * A statement, Bind or COPY row pgveil will not forward, with the SQLSTATE and message the client
 * gets. Messages name the column and the reason, never a value.
 */
import { errorResponse } from '../protocol/messages.js';
import { SessionFatal } from '../session/sessionFatal.js';
import { formatColumnName, type ColumnPolicy } from '../../policy/index.js';

export const UNSUPPORTED = '0A000';
export const INVALID_TEXT_REPRESENTATION = '22P02';
/** The session may not run the statement, or see a column's value the way it asks. */
export const INSUFFICIENT_PRIVILEGE = '42501';

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

export const PROTOCOL_VIOLATION = '08P01';

/**
 * A Bind that carries no value for a parameter feeding a protected column: PostgreSQL refuses a
 * Bind whose count differs from its statement's, and pgveil must never forward one it could not check.
 */
export function missingValueRefusal(policy: ColumnPolicy, param: number): PolicyRefusal {
  return new PolicyRefusal(PROTOCOL_VIOLATION, `pgveil refused the Bind: it supplies no value for parameter $${param}, which feeds protected column ${columnLabel(policy)}`);
}

export function unsupportedRefusal(message: string): PolicyRefusal {
  return new PolicyRefusal(UNSUPPORTED, message);
}

/**
 * A reload changed what a result or COPY already under way does to its columns, and part of it
 * was already rewritten or sent under the old plan: the session ends before more leaves.
 */
export function endedByReload(what: string, during: string, again: 'COPY' | 'statement'): SessionFatal {
  return new SessionFatal('40001', `pgveil ended ${what}: the column policies of its columns changed while ${during} (the policy file was reloaded)`, {
    hint: `Run the ${again} again: it will follow the policies now in force.`,
  });
}

/**
 * A Sync while a COPY FROM STDIN runs (or may start, behind a refusal or an error in its batch):
 * the session ends (08P01). PostgreSQL ignores it in COPY IN mode and answers it once the COPY
 * failed, which depends on the rows; a miscounted answer would tie later replies to the wrong
 * statements.
 */
export function syncDuringCopyIn(): SessionFatal {
  return new SessionFatal('08P01', 'pgveil ended the session: a Sync arrived while a COPY FROM STDIN was running (or could start behind a refused message)', {
    hint: 'send Sync only after CopyDone or CopyFail (COPY through a simple Query needs none)',
  });
}
