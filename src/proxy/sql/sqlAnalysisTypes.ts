/**
 * The public shapes of statement analysis: what the proxy's write path asks (a SQL text and the
 * protected columns) and what it gets back (which `$n` and which literal feeds which protected
 * column, COPY targets, and rejections). All byte offsets are UTF-8 byte offsets into the text.
 */

export interface ColumnRef {
  readonly schema: string;
  readonly table: string;
  readonly column: string;
}

export interface ResolvedTable {
  readonly schema: string;
  readonly table: string;
  /** All columns in attnum order (an INSERT without a column list fills them in this order). */
  readonly columns: readonly string[];
}

/** What the analyser needs to know about the database; answers must be stable for one cache key. */
export interface ProtectedSchema {
  /** Resolves a relation as written (schema omitted → the session's search path, public by default). */
  resolveTable(schema: string | undefined, table: string): ResolvedTable | undefined;
  /** True when the column has a policy (its values must be protected). */
  isProtected(column: ColumnRef): boolean;
  /**
   * Optional: the bare names of every table that has a protected column, in any schema. Used to
   * spot protected tables in text pgveil cannot parse or analyse (DO blocks, function bodies);
   * without it the analyser asks `resolveTable` about each word of such text instead.
   */
  protectedTableNames?(): Iterable<string>;
}

/** `$n` feeding a protected column (n counts from 1, as in the SQL text). */
export interface ParamTarget {
  readonly param: number;
  readonly column: ColumnRef;
}

/** A constant in the text feeding a protected column: replace bytes [start, end) to protect it. */
export interface LiteralTarget {
  readonly start: number;
  readonly end: number;
  /** The value as PostgreSQL would read it: escapes decoded, numbers in canonical form. */
  readonly value: string;
  readonly column: ColumnRef;
}

/** Two protected columns compared with each other (a join on tokens): equal only under one policy. */
export interface ColumnComparison {
  readonly left: ColumnRef;
  readonly right: ColumnRef;
}

export type CopyFormat = 'text' | 'csv' | 'binary';

/** COPY options with PostgreSQL's defaults filled in for the format. */
export interface CopyOptions {
  readonly format: CopyFormat;
  readonly delimiter: string;
  /** The string that stands for NULL (`\N` in text, empty in csv). */
  readonly null: string;
  /** `match` checks the header against the column names; either way the first line is no data. */
  readonly header: boolean | 'match';
  /** csv only (empty strings in text format). */
  readonly quote: string;
  readonly escape: string;
  /** Columns whose unquoted null string is read as a value (csv); `'*'` for all. */
  readonly forceNotNull: readonly string[] | '*';
  /** Columns whose quoted null string is read as NULL (csv); `'*'` for all. */
  readonly forceNull: readonly string[] | '*';
  /** The string that stands for the column default, when given. */
  readonly default: string | undefined;
}

export interface CopyColumn {
  readonly column: ColumnRef;
  readonly protected: boolean;
}

/** `COPY table [(cols)] FROM STDIN` into a table with protected columns: rows must be rewritten. */
export interface CopyFromTarget {
  readonly schema: string;
  readonly table: string;
  /** The columns of each data row, in row order. */
  readonly columns: readonly CopyColumn[];
  readonly options: CopyOptions;
}

export interface Rejection {
  /** Ready for an ErrorResponse; names the column (or table) and the reason. */
  readonly message: string;
  /** SQLSTATE: 0A000 for constructs pgveil cannot map, 42601 for text that does not parse. */
  readonly sqlState: string;
  readonly column?: ColumnRef;
  /** Byte offset of the offending construct in the text, when known. */
  readonly position?: number;
}

export interface StatementAnalysis {
  /** Byte range of the statement in the text (without its trailing semicolon). */
  readonly start: number;
  readonly end: number;
  /** The parse node name (`InsertStmt`, `SelectStmt`, `CopyStmt`…), or `Unparsed`. */
  readonly type: string;
  readonly params: readonly ParamTarget[];
  /** `$n` in `col = ANY($n)`: each element of the array is a value of the column. */
  readonly arrayParams: readonly ParamTarget[];
  readonly literals: readonly LiteralTarget[];
  readonly comparedColumns: readonly ColumnComparison[];
  readonly copyFrom: CopyFromTarget | undefined;
  readonly rejection: Rejection | undefined;
}

export interface SqlAnalysis {
  readonly statements: readonly StatementAnalysis[];
  /** The first rejection of any statement: the whole message must be refused (fail closed). */
  readonly rejection: Rejection | undefined;
  /** Every protected column each `$n` feeds (scalar and array uses alike), over all statements. */
  readonly paramColumns: ReadonlyMap<number, readonly ColumnRef[]>;
  /** True when nothing needs doing: no targets, no COPY rewrite, no rejection (forward as is). */
  readonly passThrough: boolean;
}
