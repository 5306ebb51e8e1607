/**
 * The public shapes of statement analysis: what the proxy's write path asks (a SQL text and the
 * protected columns) and what it gets back (which `$n` and which literal feeds which protected
 * column, COPY targets, and rejections). All byte offsets are UTF-8 byte offsets into the text.
 */
import type { Node } from 'libpg-query';
import type { StatementPrivilege } from '../../policy/index.js';
import type { SessionEffect } from './sessionEffects.js';
import type { PreparedNameUse } from './preparedNames.js';
import type { SettingWords } from './settingWords.js';

/** The rule names are the policy file's privilege names (see STATEMENT_PRIVILEGES). */
export type StatementRule = StatementPrivilege;

export interface RuleFinding {
  readonly rule: StatementRule;
  /** What the statement does, for the message (no value: names of statement kinds, functions, tables). */
  readonly what: string;
  /**
   * Code that every role needs the `code` privilege for, since its effect on protected columns
   * cannot be analysed: a trigger or rule on a table with column policies, or a body that runs
   * dynamic SQL or is in a language pgveil does not read.
   */
  readonly unanalysable?: boolean;
  /** A statement every role needs this rule's privilege for (logins and role memberships: `ddl`). */
  readonly everyRole?: true;
}

export interface ColumnRef {
  readonly schema: string;
  readonly table: string;
  readonly column: string;
  /**
   * Reached through a name that may denote another relation than this one (ResolvedTable.standIn):
   * protected as this column, but not to be taken for its stored values (sameStoredColumn).
   */
  readonly standIn?: true;
}

export interface ResolvedTable {
  readonly schema: string;
  readonly table: string;
  /** All columns in attnum order (an INSERT without a column list fills them in this order). */
  readonly columns: readonly string[];
  /**
   * Set when pgveil cannot tell which relation an unqualified name denotes and more than one of
   * them has column policies (the session's search_path is unknown): statements naming it are
   * refused with this message.
   */
  readonly refusal?: string;
  /** An unqualified name another search_path could resolve to a different relation with policies. */
  readonly pathDependent?: boolean;
  /**
   * An unqualified name taken as this relation, with policies, although the server may look it up
   * as another one (a relation shadowing it on the search_path, a temporary table, a path pgveil
   * cannot follow): values written through it are protected as for this relation, but its columns
   * hold other data than this relation's.
   */
  readonly standIn?: true;
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
  /**
   * Optional: what a column shows of a column stored in plaintext whose reads may be masked
   * (policy method passthrough) — itself (or a plain view column of it), or a value computed from
   * it (a view expression). Without it no exposure is reported.
   */
  plaintextSource?(column: ColumnRef): PlaintextSource | undefined;
  /** Optional: bare names of relations with such columns, for text pgveil cannot analyse. */
  plaintextTableNames?(): Iterable<string>;
  /**
   * Optional: true when the policy file names this column — of this table or, through
   * inheritance, of a parent or child of it — whether or not the catalog shows it now; with
   * `column` omitted, any column of the table itself; with `table` omitted too, any table of the
   * schema. `schema` undefined matches every schema. DDL that renames, moves or retypes what a
   * policy binds is refused. Without it, only the catalog's protected columns count.
   */
  isPolicyBound?(schema: string | undefined, table?: string, column?: string): boolean;
  /**
   * Optional: true unless PostgreSQL marks every function of this name (aggregates and window
   * functions included) immutable or stable — in `schema` when the statement qualifies the name,
   * else in pg_catalog and on the session's search_path; a name the catalog does not know counts as
   * volatile. A volatile call receiving a plaintext-at-rest column's value may store it out of the
   * read path's sight: an exposure. Without it, only the built-in side channels count.
   */
  functionIsVolatile?(name: string, schema?: string): boolean;
  /** Optional: the same for an operator (its function, pg_operator.oprcode). */
  operatorIsVolatile?(name: string, schema?: string): boolean;
  /**
   * Optional: the schema for the statements of the same text after one with these session
   * effects (a SET search_path changes what later unqualified names denote). Without it, every
   * statement of a text is resolved alike.
   */
  afterStatement?(effects: readonly SessionEffect[]): ProtectedSchema;
}

/** See ProtectedSchema.plaintextSource. */
export interface PlaintextSource {
  /** The column the policy names (for a view column: the base column it shows or is computed from). */
  readonly column: ColumnRef;
  /** True for a value computed from it: RowDescription then names no column, so it cannot be masked. */
  readonly computed: boolean;
}

/**
 * A plaintext-at-rest column whose value the statement may hand to the client (or store
 * elsewhere) other than as a bare result column, which RowDescription names and the read path masks.
 */
export interface PlaintextExposure {
  readonly column: ColumnRef;
  /** How, as a clause: "it is used in an expression of the select list". */
  readonly reason: string;
  readonly position?: number;
  /**
   * Not a read: the statement replaces the stored value (an UPDATE's SET). A session that reads
   * the column masked could only be writing back what it was shown, or overwriting blind.
   */
  readonly overwrite?: true;
}

/** `$n` feeding a protected column (n counts from 1, as in the SQL text). */
export interface ParamTarget {
  readonly param: number;
  readonly column: ColumnRef;
  /** Byte offsets of the `$n` tokens that feed this column (one `$n` may feed others elsewhere). */
  readonly locations: readonly number[];
}

/** One `$n` token in the text, wherever it is used. */
export interface ParamUse {
  readonly param: number;
  readonly location: number;
}

/** A constant in the text feeding a protected column: replace bytes [start, end) to protect it. */
export interface LiteralTarget {
  readonly start: number;
  readonly end: number;
  /** The value as PostgreSQL would read it: escapes decoded, numbers in canonical form. */
  readonly value: string;
  readonly column: ColumnRef;
  /** The constant is an array's text (`unnest('{a,b}'::text[])`): protect each element, splice the array. */
  readonly array?: true;
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

/** What a COPY statement says about its data stream (see copyStatement.copyShape). */
export interface CopyShape {
  readonly from: boolean;
  /** FROM STDIN / TO STDOUT: no server file, no PROGRAM. */
  readonly stdio: boolean;
  /** COPY (query) TO. */
  readonly query: boolean;
  readonly relation: { readonly schema: string | undefined; readonly table: string } | undefined;
  /** The column list, when given. */
  readonly columns: readonly string[] | undefined;
  /** The WITH options as parsed (DefElem nodes), read by copyOptions when rows need rewriting. */
  readonly options: readonly Node[] | undefined;
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
  /** A COPY statement as written (copyShape), so its data stream is known without parsing again. */
  readonly copy?: CopyShape;
  readonly rejection: Rejection | undefined;
  /**
   * Plaintext-at-rest columns that may reach the client other than as bare result columns, and
   * columns with a policy whose stored value the statement replaces (`overwrite`).
   */
  readonly exposures: readonly PlaintextExposure[];
  /** Set when the statement may read data by a route pgveil cannot follow (SQL in a string, a DO block). */
  readonly opaqueRead: string | undefined;
  /** What the statement does to search_path, role and transaction, once it completes (none when omitted). */
  readonly sessionEffects?: readonly SessionEffect[];
  /** The statement rules it meets (none when omitted): refused or not per session (statementRuleGuard). */
  readonly rules?: readonly RuleFinding[];
  /** Prepared statements it defines, removes or runs by name (none when omitted). */
  readonly preparedNames?: PreparedNameUse;
  /** Every `$n` token of the statement (none when omitted). */
  readonly paramUses?: readonly ParamUse[];
  /**
   * Byte offsets of parameters and constants compared with something other than a protected
   * column (`$1 IN (ssn, name)` compares one `$1` with both; none when omitted).
   */
  readonly plainComparedValues?: readonly number[];
}

export interface SqlAnalysis {
  readonly statements: readonly StatementAnalysis[];
  /** The first rejection of any statement: the whole message must be refused (fail closed). */
  readonly rejection: Rejection | undefined;
  /** Every protected column each `$n` feeds (scalar and array uses alike), over all statements. */
  readonly paramColumns: ReadonlyMap<number, readonly ColumnRef[]>;
  /** Every statement's exposures (the caller refuses those its session sees masked). */
  readonly exposures: readonly PlaintextExposure[];
  /** The first statement's opaque read, if any. */
  readonly opaqueRead: string | undefined;
  /** True when nothing needs doing: no targets, no COPY rewrite, no rejection, no exposure (forward as is). */
  readonly passThrough: boolean;
  /** Whether the text names something that may change the session settings the analysis relies on. */
  readonly settingWords: SettingWords;
}
