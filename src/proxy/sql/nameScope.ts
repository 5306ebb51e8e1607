/**
 * Name resolution for column references: which relation (table, subquery, CTE, join, EXCLUDED)
 * a `col`, `alias.col` or `schema.table.col` points to, through nested queries, and what the
 * column carries — a base column (protected or not), a value derived from a protected column,
 * something else, or nobody-knows (functions in FROM, unknown tables).
 */
import type { A_Const, Node } from 'libpg-query';
import type { ColumnRef, PlaintextSource } from './sqlAnalysisTypes.js';
import type { TableInfo } from './relationLookup.js';

export type ColumnOrigin =
  | { readonly kind: 'column'; readonly column: ColumnRef; readonly protected: boolean }
  /** An expression over a protected column (`lower(ssn)`), or a set operation mixing one in. */
  | { readonly kind: 'derived'; readonly from: ColumnRef }
  | { readonly kind: 'value' }
  /** Values the client supplies through a derived source (VALUES, `SELECT $1`, unnest): see suppliedValues.ts. */
  | { readonly kind: 'supplied'; readonly source: SuppliedColumn }
  /** In a column list: a run of zero or more columns nobody knows (`f.*` of a function). */
  | { readonly kind: 'unknown' };

/** One parameter or constant behind a supplied column (per row for VALUES, per element for unnest). */
export type SuppliedValue =
  | { readonly kind: 'param'; readonly param: number; readonly location: number | undefined }
  | { readonly kind: 'literal'; readonly constant: A_Const }
  /** `unnest($n::type[])`: each element of the array parameter. */
  | { readonly kind: 'arrayParam'; readonly param: number; readonly location: number | undefined }
  /** `unnest('{a,b}'::text[])`: an array constant, each element protected and the array re-written. */
  | { readonly kind: 'arrayConstant'; readonly constant: A_Const };

/**
 * A column of a derived source that only passes client values through. Its identity (the object)
 * is what uses are tracked by: a CTE read twice yields the same object.
 */
export interface SuppliedColumn {
  readonly values: readonly SuppliedValue[];
}

export interface OutputColumn {
  readonly name: string | undefined;
  readonly origin: ColumnOrigin;
  /** The plaintext-at-rest column it shows, bare or computed (tracked apart from `origin`). */
  readonly shows?: PlaintextSource;
}

export const UNKNOWN_COLUMNS: OutputColumn = { name: undefined, origin: { kind: 'unknown' } };
export const VALUE_ORIGIN: ColumnOrigin = { kind: 'value' };

/** One entry of a FROM list (or a target relation) as column references see it. */
export interface RangeItem {
  /** The alias, or the relation's own name when there is none; undefined for unnamed subqueries. */
  readonly name: string | undefined;
  /** For an unaliased base table: lets `schema.table.col` reach it. */
  readonly table?: { readonly schema: string; readonly table: string };
  readonly columns: readonly OutputColumn[];
  /** RETURNING's `old`/`new`: qualify columns but add nothing to `*`. */
  readonly hiddenFromStar?: boolean;
}

export type Resolution =
  | { readonly kind: 'column'; readonly origin: ColumnOrigin; readonly shows?: PlaintextSource }
  | { readonly kind: 'wholeRow'; readonly item: RangeItem }
  | { readonly kind: 'unresolved' };

export function tableColumns(info: TableInfo): OutputColumn[] {
  return info.columns.map((column): OutputColumn => ({
    name: column.ref.column,
    origin: { kind: 'column', column: column.ref, protected: column.protected },
    ...(column.plaintext === undefined ? {} : { shows: column.plaintext }),
  }));
}

export function isProtectedOrigin(origin: ColumnOrigin): origin is { kind: 'column'; column: ColumnRef; protected: true } {
  return origin.kind === 'column' && origin.protected;
}

/** Renames the first columns positionally (`AS s(a, b)`, CTE column lists). */
export function renameColumns(columns: readonly OutputColumn[], names: readonly string[]): OutputColumn[] {
  const renamed: OutputColumn[] = [];
  let next = 0;
  for (const column of columns) {
    if (column.origin.kind === 'unknown' || next >= names.length) {
      renamed.push(column);
    } else {
      renamed.push({ ...column, name: names[next++] });
    }
  }
  return renamed;
}

/** The column called `name` in a list: its origin, `unknown` when an unknown run may hold it. */
export function findColumn(columns: readonly OutputColumn[], name: string): ColumnOrigin | undefined {
  return findOutput(columns, name)?.origin;
}

/** The column called `name` in a list, UNKNOWN_COLUMNS when an unknown run may hold it. */
export function findOutput(columns: readonly OutputColumn[], name: string): OutputColumn | undefined {
  let mayBeUnknown = false;
  for (const column of columns) {
    if (column.name === name) return column;
    if (column.origin.kind === 'unknown') mayBeUnknown = true;
  }
  return mayBeUnknown ? UNKNOWN_COLUMNS : undefined;
}

/** The first plaintext-at-rest column a list of columns (a whole row) shows, if any. */
export function plaintextOfRow(columns: readonly OutputColumn[]): ColumnRef | undefined {
  return columns.find((column) => column.shows !== undefined)?.shows?.column;
}

function columnResolution(column: OutputColumn): Resolution {
  return column.shows === undefined ? { kind: 'column', origin: column.origin } : { kind: 'column', origin: column.origin, shows: column.shows };
}

/** The column at a position (INSERT … SELECT), `unknown` once an unknown run comes first. */
export function columnAt(columns: readonly OutputColumn[], index: number): ColumnOrigin | undefined {
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i] as OutputColumn;
    if (column.origin.kind === 'unknown') return column.origin;
    if (i === index) return column.origin;
  }
  return undefined;
}

export class Scope {
  readonly items: RangeItem[] = [];
  private readonly ctes = new Map<string, readonly OutputColumn[]>();

  constructor(readonly parent: Scope | undefined) {}

  defineCte(name: string, columns: readonly OutputColumn[]): void {
    this.ctes.set(name, columns);
  }

  findCte(name: string): readonly OutputColumn[] | undefined {
    for (let scope: Scope | undefined = this; scope !== undefined; scope = scope.parent) {
      const columns = scope.ctes.get(name);
      if (columns !== undefined) return columns;
    }
    return undefined;
  }

  /** Resolves a ColumnRef's `fields` as PostgreSQL would, innermost query level first. */
  resolve(fields: readonly Node[] | undefined): Resolution {
    const names: string[] = [];
    let star = false;
    for (const field of fields ?? []) {
      if ('String' in field) names.push(field.String.sval ?? '');
      else if ('A_Star' in field) star = true;
    }
    if (star) {
      const item = names.length === 0 ? undefined : this.findItem(names);
      return item === undefined ? { kind: 'unresolved' } : { kind: 'wholeRow', item };
    }
    if (names.length === 1) return this.resolveBareName(names[0] as string);
    if (names.length >= 2) {
      const qualifier = names.slice(0, -1);
      const item = this.findItem(qualifier.length > 2 ? qualifier.slice(-2) : qualifier);
      if (item === undefined) return { kind: 'unresolved' };
      const found = findOutput(item.columns, names[names.length - 1] as string);
      return found === undefined ? { kind: 'unresolved' } : columnResolution(found);
    }
    return { kind: 'unresolved' };
  }

  private resolveBareName(name: string): Resolution {
    let unknownSeen = false;
    for (let scope: Scope | undefined = this; scope !== undefined; scope = scope.parent) {
      for (const item of scope.items) {
        const found = findOutput(item.columns, name);
        if (found === undefined) continue;
        // A relation nobody knows may or may not hold the name: keep looking for a known one,
        // which is the safe reading (a value compared with it gets protected or refused).
        if (found.origin.kind === 'unknown') unknownSeen = true;
        else return columnResolution(found);
      }
    }
    if (unknownSeen) return { kind: 'column', origin: { kind: 'unknown' } };
    const item = this.findItem([name]);
    return item === undefined ? { kind: 'unresolved' } : { kind: 'wholeRow', item };
  }

  /** `alias` or `table` (one name), `schema.table` (two names), innermost level first. */
  private findItem(qualifier: readonly string[]): RangeItem | undefined {
    for (let scope: Scope | undefined = this; scope !== undefined; scope = scope.parent) {
      for (const item of scope.items) {
        if (qualifier.length === 1 && item.name === qualifier[0]) return item;
        if (qualifier.length === 2 && item.table !== undefined
          && item.table.schema === qualifier[0] && item.table.table === qualifier[1]) return item;
      }
    }
    return undefined;
  }
}
