/**
 * A catalog reading builds its snapshot a slice of rows at a time, with a turn of the event loop
 * between slices: built in one go, 200 000 columns held the loop (every other session of the
 * process) for the whole build. The builder is fed synthetic rows from memory; the assertion
 * counts the rows handled between two turns of the event loop, not milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { readCatalogSnapshot } from '../../../src/proxy/enforcement/catalog/catalogSnapshot.js';
import { UNITS_PER_SLICE } from '../../../src/proxy/enforcement/catalog/eventLoopSlices.js';
import type { CatalogRow } from '../../../src/policy/index.js';
import { fakeCatalogConnection, turnWatcher } from './support/fakeCatalogConnection.js';

const TABLES = 1_000;
const COLUMNS_PER_TABLE = 50;
const FIRST_OID = 20_000;
const TEXT = 25;

/** One row per column, as RELATIONS_SQL returns them (oid order, then attnum; int8 as strings). */
function columnRows(tables: number, columnsPerTable: number): CatalogRow[] {
  const rows: CatalogRow[] = [];
  for (let table = 0; table < tables; table++) {
    for (let attnum = 1; attnum <= columnsPerTable; attnum++) {
      rows.push({
        oid: String(FIRST_OID + table), schema_name: 'public', table_name: `t${table}`, relkind: 'r',
        attnum, column_name: `c${attnum}`, type_oid: String(TEXT), typmod: -1, generated: attnum === 2 ? 's' : '',
      });
    }
  }
  return rows;
}

describe('building a catalog snapshot', () => {
  it('handles at most a slice of rows per turn of the event loop, however many columns there are', async () => {
    const connection = fakeCatalogConnection({ columns: columnRows(TABLES, COLUMNS_PER_TABLE) });
    const watcher = turnWatcher(connection);
    const snapshot = await readCatalogSnapshot(connection.query);
    const mostPerTurn = watcher.stop();
    expect(connection.touched()).toBe(TABLES * COLUMNS_PER_TABLE);
    expect(mostPerTurn).toBeLessThanOrEqual(UNITS_PER_SLICE);
    expect(snapshot.relations.size).toBe(TABLES);
  });

  it('weighs a view rule by its length: a few long rules per turn, not a slice of rows of them', async () => {
    const views = 200;
    // A rule's text is often kilobytes; tokenising it costs what a few hundred column rows do.
    const action = `({QUERY :commandType 1 ${':x 1 '.repeat(1_000)}})`;
    const rules = Array.from({ length: views }, (_, i) => ({ view_oid: String(FIRST_OID + i), action }));
    const connection = fakeCatalogConnection({ columns: columnRows(views, 2).map((row) => ({ ...row, relkind: 'v' })), rules });
    const watcher = turnWatcher(connection, 'view_oid');
    await readCatalogSnapshot(connection.query);
    const mostPerTurn = watcher.stop();
    expect(connection.touched('view_oid')).toBe(views);
    // 1 000 units a slice, each rule over 100 units: at most ten rules a turn.
    expect(mostPerTurn).toBeLessThanOrEqual(Math.ceil(UNITS_PER_SLICE / (action.length / 50)));
  });

  it('builds the same relations, columns and routines as the rows say, in one read-only transaction', async () => {
    const functions = [
      { schema_name: 'public', name: 'stash', volatile: true },
      { schema_name: 'public', name: 'lower', volatile: false },
    ];
    const connection = fakeCatalogConnection({ columns: columnRows(3, 3), functions });
    const snapshot = await readCatalogSnapshot(connection.query);
    expect([...snapshot.relations.keys()]).toEqual([FIRST_OID, FIRST_OID + 1, FIRST_OID + 2]);
    const second = snapshot.byName.get('public\u0000t1');
    expect(second?.columns).toEqual([
      { attnum: 1, name: 'c1', typeOid: TEXT, typmod: -1 },
      { attnum: 2, name: 'c2', typeOid: TEXT, typmod: -1, generated: true },
      { attnum: 3, name: 'c3', typeOid: TEXT, typmod: -1 },
    ]);
    expect(second?.byAttnum.get(3)).toBe(second?.columns[2]);
    expect(snapshot.byBareName.get('t2')?.map((relation) => relation.oid)).toEqual([FIRST_OID + 2]);
    expect(snapshot.currentUser).toBe('app');
    expect(snapshot.defaultSearchPath).toBe('"$user", public');
    expect([...(snapshot.routines?.functions.get('public')?.known ?? [])]).toEqual(['stash', 'lower']);
    expect([...(snapshot.routines?.functions.get('public')?.volatile ?? [])]).toEqual(['stash']);
    expect(connection.statements[0]).toBe('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    expect(connection.statements.at(-1)).toBe('COMMIT');
  });

  it('rolls the reading back and hands out nothing when the database fails mid-reading', async () => {
    // The third FETCH fails while the builder works on the second batch (the next one is asked for at once).
    const connection = fakeCatalogConnection({
      columns: columnRows(100, 50), failing: { statement: /^FETCH/, failAt: 3 },
    });
    await expect(readCatalogSnapshot(connection.query)).rejects.toThrow('connection lost');
    expect(connection.statements.at(-1)).toBe('ROLLBACK');
    expect(connection.statements).not.toContain('COMMIT');
  });
});
