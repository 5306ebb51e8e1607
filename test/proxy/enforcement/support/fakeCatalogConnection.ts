/**
 * A catalog connection in memory: answers the snapshot's queries (plain, or through DECLARE …
 * FETCH in a transaction) from synthetic rows, each answer in a later turn of the event loop as a
 * database's would come. Counts the rows the snapshot builder has worked on (`touched`: a read of
 * a row's key field, per field), so a test can see how many rows one turn of the event loop handled.
 */
import type { CatalogQuery, CatalogRow } from '../../../../src/policy/index.js';

export interface FakeCatalogRows {
  /** COLUMNS_SQL: one row per column, with its relation's schema_name, table_name and relkind (RELATIONS_SQL's rows). */
  readonly columns: readonly CatalogRow[];
  /** VIEW_RULES_SQL: view_oid, action. */
  readonly rules?: readonly CatalogRow[];
  /** The functions query: schema_name, name, volatile. */
  readonly functions?: readonly CatalogRow[];
  /** The statement whose `failAt`-th run fails (a connection lost mid-reading). */
  readonly failing?: { readonly statement: RegExp; readonly failAt: number };
}

export interface FakeCatalogConnection {
  readonly query: CatalogQuery;
  /** Every statement run, in order (a cursor's SQL as its DECLARE). */
  readonly statements: string[];
  /** Rows whose key field (every key field: undefined) the builder has read so far. */
  touched(field?: KeyField): number;
}

/** The field a builder reads once per row of each query (the row's key): columns, view rules, routines. */
const KEY_FIELDS = ['oid', 'view_oid', 'name'] as const;
type KeyField = typeof KEY_FIELDS[number];

export function fakeCatalogConnection(rows: FakeCatalogRows): FakeCatalogConnection {
  const touched = new Map<KeyField, number>(KEY_FIELDS.map((field) => [field, 0]));
  const counted = (row: CatalogRow): CatalogRow => {
    const copy: Record<string, unknown> = { ...row };
    for (const key of KEY_FIELDS) {
      if (!(key in row)) continue;
      Object.defineProperty(copy, key, {
        enumerable: true,
        get: () => {
          touched.set(key, (touched.get(key) ?? 0) + 1);
          return row[key];
        },
      });
      break;
    }
    return copy;
  };
  const relations = [...new Map(rows.columns.map((row) => [row['oid'], {
    oid: row['oid'], schema_name: row['schema_name'], table_name: row['table_name'], relkind: row['relkind'],
  }])).values()];
  const resultOf = (sql: string): readonly CatalogRow[] => {
    if (sql.includes('pg_attribute')) return rows.columns.map(counted);
    if (sql.includes('AS relkind')) return relations;
    if (sql.includes('ev_action')) return (rows.rules ?? []).map(counted);
    if (sql.includes('pg_settings')) return [{ name: 'app', search_path: '"$user", public', search_path_source: 'default' }];
    if (sql.includes('pg_aggregate')) return (rows.functions ?? []).map(counted);
    return [];
  };
  const cursors = new Map<string, CatalogRow[]>();
  const statements: string[] = [];
  let failingRuns = 0;
  const answer = (sql: string): readonly CatalogRow[] => {
    statements.push(sql);
    if (rows.failing?.statement.test(sql) === true && ++failingRuns === rows.failing.failAt) throw new Error('connection lost');
    const declared = /^DECLARE (\w+) NO SCROLL CURSOR FOR ([\s\S]*)$/.exec(sql);
    if (declared !== null) {
      cursors.set(declared[1] as string, [...resultOf(declared[2] as string)]);
      return [];
    }
    const fetched = /^FETCH FORWARD (\d+) FROM (\w+)$/.exec(sql);
    if (fetched !== null) return cursors.get(fetched[2] as string)?.splice(0, Number(fetched[1])) ?? [];
    if (/^(BEGIN|COMMIT|ROLLBACK)\b/.test(sql)) return [];
    return resultOf(sql);
  };
  return {
    query: (sql) => new Promise((resolve, reject) => setImmediate(() => {
      try {
        resolve(answer(sql));
      } catch (error) {
        reject(error);
      }
    })),
    statements,
    touched: (field) => (field === undefined ? [...touched.values()].reduce((sum, count) => sum + count, 0) : touched.get(field) ?? 0),
  };
}

/** While started: the most rows touched (by their key `field`: every row) between two turns of the event loop. */
export function turnWatcher(connection: FakeCatalogConnection, field?: KeyField): { stop(): number } {
  let most = 0;
  let last = connection.touched(field);
  let running = true;
  const tick = (): void => {
    const now = connection.touched(field);
    most = Math.max(most, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      running = false;
      tick();
      return most;
    },
  };
}
