/**
 * What one statement's analysis has found so far. A rejection is thrown (StatementRejected) so
 * that the walk stops at the first construct pgveil cannot map: fail closed, nothing forwarded.
 */
import type {
  ColumnComparison, ColumnRef, CopyFromTarget, LiteralTarget, ParamTarget, PlaintextExposure, Rejection,
} from './sqlAnalysisTypes.js';
import type { SuppliedColumn } from './nameScope.js';
import { columnName, sameColumn } from './relationLookup.js';

/** SQLSTATE feature_not_supported: the statement is valid SQL pgveil will not forward. */
export const UNSUPPORTED_SQLSTATE = '0A000';
/** SQLSTATE syntax_error. */
export const SYNTAX_ERROR_SQLSTATE = '42601';

export class StatementRejected extends Error {
  constructor(readonly rejection: Rejection) {
    super(rejection.message);
    this.name = 'StatementRejected';
  }
}

/** Refuses a statement because of what reaches (or touches) a protected column. */
export function rejectColumn(column: ColumnRef, reason: string, position: number | undefined): never {
  throw new StatementRejected({
    message: `pgveil refused the statement: protected column ${columnName(column)}: ${reason}`,
    sqlState: UNSUPPORTED_SQLSTATE,
    column,
    ...(position === undefined ? {} : { position }),
  });
}

/** Refuses a statement for a reason not tied to one column (with the message as given). */
export function rejectStatement(message: string, position: number | undefined, sqlState = UNSUPPORTED_SQLSTATE): never {
  throw new StatementRejected({ message, sqlState, ...(position === undefined ? {} : { position }) });
}

export class StatementFindings {
  readonly params: ParamTarget[] = [];
  readonly arrayParams: ParamTarget[] = [];
  readonly literals: LiteralTarget[] = [];
  readonly comparedColumns: ColumnComparison[] = [];
  copyFrom: CopyFromTarget | undefined;
  readonly exposures: PlaintextExposure[] = [];
  /** The first route to data pgveil cannot follow (see StatementAnalysis.opaqueRead). */
  opaqueRead: string | undefined;

  addExposure(column: ColumnRef, reason: string, position: number | undefined): void {
    if (this.exposures.some((known) => sameColumn(known.column, column) && known.reason === reason)) return;
    this.exposures.push(position === undefined ? { column, reason } : { column, reason, position });
  }

  addOpaqueRead(reason: string): void {
    this.opaqueRead ??= reason;
  }

  /** Offsets of parameters and constants compared with a value that is not a protected column. */
  readonly plainComparedValues: number[] = [];

  addParam(param: number, column: ColumnRef, location: number | undefined): void {
    addTarget(this.params, param, column, location);
  }

  addArrayParam(param: number, column: ColumnRef, location: number | undefined): void {
    addTarget(this.arrayParams, param, column, location);
  }

  addPlainComparedValue(location: number | undefined): void {
    if (location !== undefined && !this.plainComparedValues.includes(location)) this.plainComparedValues.push(location);
  }

  addLiteral(literal: LiteralTarget): void {
    // A walk may meet the same constant twice (an IN list's left side is compared per item); met
    // with another column, both are kept so the caller can tell whether one token serves both.
    if (this.literals.some((known) => known.start === literal.start && sameColumn(known.column, literal.column))) return;
    this.literals.push(literal);
  }

  addComparison(left: ColumnRef, right: ColumnRef): void {
    if (sameColumn(left, right)) return;
    const known = this.comparedColumns.some((pair) =>
      (sameColumn(pair.left, left) && sameColumn(pair.right, right))
      || (sameColumn(pair.left, right) && sameColumn(pair.right, left)));
    if (!known) this.comparedColumns.push({ left, right });
  }

  /** Supplied columns whose values were protected for a column (written into it or compared with it). */
  private readonly suppliedFeeds = new Map<SuppliedColumn, { column: ColumnRef; position: number | undefined }[]>();
  /** Supplied columns also used where a token must not go, and why. */
  private readonly suppliedMisuses = new Map<SuppliedColumn, string>();

  addSuppliedFeed(source: SuppliedColumn, column: ColumnRef, position: number | undefined): void {
    const feeds = this.suppliedFeeds.get(source) ?? [];
    feeds.push({ column, position });
    this.suppliedFeeds.set(source, feeds);
  }

  addSuppliedMisuse(source: SuppliedColumn, reason: string): void {
    if (!this.suppliedMisuses.has(source)) this.suppliedMisuses.set(source, reason);
  }

  /**
   * Once the whole statement is walked: a supplied column whose values become tokens must reach
   * nothing else (a plain column, a function, a comparison with plain data would get the token),
   * and its constants can become one column's tokens only (a parameter's columns are checked
   * against their policies by the caller).
   */
  refuseConflictingSuppliedUses(): void {
    for (const [source, feeds] of this.suppliedFeeds) {
      const first = feeds[0];
      if (first === undefined) continue;
      const misuse = this.suppliedMisuses.get(source);
      if (misuse !== undefined) {
        rejectColumn(first.column, `the derived column (VALUES, WITH, subquery or unnest) whose values it receives ${misuse}, where its tokens must not go; write the value to each column separately`, first.position);
      }
      const other = feeds.find((feed) => !sameColumn(feed.column, first.column));
      if (other !== undefined && source.values.some((value) => value.kind === 'literal' || value.kind === 'arrayConstant')) {
        rejectColumn(first.column, `the constants of the derived column whose values it receives also feed protected column ${columnName(other.column)}; use parameters`, other.position);
      }
    }
  }

  get isEmpty(): boolean {
    return this.params.length === 0 && this.arrayParams.length === 0 && this.literals.length === 0
      && this.comparedColumns.length === 0 && this.copyFrom === undefined;
  }
}

interface MutableParamTarget extends ParamTarget {
  readonly locations: number[];
}

function addTarget(targets: ParamTarget[], param: number, column: ColumnRef, location: number | undefined): void {
  const known = targets.find((target) => target.param === param && sameColumn(target.column, column)) as MutableParamTarget | undefined;
  const locations = location === undefined ? [] : [location];
  if (known === undefined) {
    const target: MutableParamTarget = { param, column, locations };
    targets.push(target);
  } else if (location !== undefined && !known.locations.includes(location)) {
    known.locations.push(location);
  }
}
