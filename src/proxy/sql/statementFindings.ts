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

  addExposure(column: ColumnRef, reason: string, position: number | undefined, overwrite = false): void {
    if (this.exposures.some((known) => sameColumn(known.column, column) && known.reason === reason)) return;
    const exposure: PlaintextExposure = position === undefined ? { column, reason } : { column, reason, position };
    this.exposures.push(overwrite ? { ...exposure, overwrite: true } : exposure);
  }

  addOpaqueRead(reason: string): void {
    this.opaqueRead ??= reason;
  }

  /** Offsets of parameters and constants compared with a value that is not a protected column. */
  readonly plainComparedValues: number[] = [];
  private readonly plainCompared = new Set<number>();
  private readonly literalKeys = new Set<string>();
  private readonly paramLocations = new Set<string>();
  private readonly targetsByKey = new Map<string, MutableParamTarget>();

  addParam(param: number, column: ColumnRef, location: number | undefined): void {
    this.addTarget(this.params, 's', param, column, location);
  }

  addArrayParam(param: number, column: ColumnRef, location: number | undefined): void {
    this.addTarget(this.arrayParams, 'a', param, column, location);
  }

  addPlainComparedValue(location: number | undefined): void {
    if (location === undefined || this.plainCompared.has(location)) return;
    this.plainCompared.add(location);
    this.plainComparedValues.push(location);
  }

  addLiteral(literal: LiteralTarget): void {
    // A walk may meet the same constant twice (an IN list's left side is compared per item); met
    // with another column, both are kept so the caller can tell whether one token serves both.
    const key = `${literal.start}\u0000${columnKey(literal.column)}`;
    if (this.literalKeys.has(key)) return;
    this.literalKeys.add(key);
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

  private addTarget(targets: ParamTarget[], kind: string, param: number, column: ColumnRef, location: number | undefined): void {
    const targetKey = `${kind}\u0000${param}\u0000${columnKey(column)}`;
    let target = this.targetsByKey.get(targetKey);
    if (target === undefined) {
      target = { param, column, locations: [] };
      this.targetsByKey.set(targetKey, target);
      targets.push(target);
    }
    if (location === undefined) return;
    // A walk may meet one `$n` token twice (an IN list's left side): each offset once.
    const key = `${kind}\u0000${location}\u0000${columnKey(column)}`;
    if (this.paramLocations.has(key)) return;
    this.paramLocations.add(key);
    target.locations.push(location);
  }

  get isEmpty(): boolean {
    return this.params.length === 0 && this.arrayParams.length === 0 && this.literals.length === 0
      && this.comparedColumns.length === 0 && this.copyFrom === undefined;
  }
}

interface MutableParamTarget extends ParamTarget {
  readonly locations: number[];
}

function columnKey(column: ColumnRef): string {
  return `${column.schema}\u0000${column.table}\u0000${column.column}`;
}
