/**
 * Schema changes never open a path for plaintext: DDL that renames, moves or retypes protected
 * data is refused (policies are bound to names), in autocommit and inside a transaction block
 * (where the session then ends aborted, as after any refusal); DDL pgveil's catalog cannot see yet
 * makes statements on the relations it changed wait for the commit. Each case reads the database
 * directly: the plaintext SECRET is never stored. Unrelated migrations keep working.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRawSession } from '../support/rawProtocol.js';
import { APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';
import { failure } from './support/refusals.js';

/** Never stored anywhere: every case tries to write it into a protected column. */
const SECRET = '123-45-6789';
const OTHER = '234-56-7890';

type Mode = 'autocommit' | 'transaction block';
const MODES: readonly Mode[] = ['autocommit', 'transaction block'];
const suffix = (mode: Mode): string => (mode === 'autocommit' ? 'ac' : 'tx');
const TABLES = ['rename_col', 'rename_tab', 'set_schema', 'add_col', 'reorder', 'recreate', 'retype', 'loose', 'staging', 'dynamic', 'pipeline'];

function schemaSql(): string {
  let sql = 'CREATE SCHEMA other;\nCREATE TABLE plain (id int, note text);\n';
  for (const mode of MODES) {
    for (const table of TABLES) sql += `CREATE TABLE ${table}_${suffix(mode)} (id int, ssn text, note text);\n`;
    sql += `ALTER TABLE staging_${suffix(mode)} DROP COLUMN ssn;\n`; // the policy names staging.ssn before it exists
  }
  return sql;
}

function policiesYaml(): string {
  let yaml = 'columns:\n';
  for (const mode of MODES) {
    for (const table of TABLES) yaml += `  public.${table}_${suffix(mode)}.ssn: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }\n`;
    yaml += `  public.add_col_${suffix(mode)}.ssn2: { kind: ssn, method: fpe, scope: s, reveal: { app: plaintext } }\n`;
  }
  // The app runs migrations here, some in DO blocks with dynamic SQL.
  return `${yaml}privileges:\n  app: [code]\n`;
}

let harness: PolicyHarness;
let direct: pg.Client;

beforeAll(async () => {
  harness = await startPolicyHarness(schemaSql(), policiesYaml());
  direct = await harness.direct();
});

afterAll(async () => {
  await direct?.end().catch(() => undefined);
  await harness?.stop();
});


async function withClient<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await harness.connect(APP);
  try {
    return await run(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs `before`, then expects `statement` refused; inside a block the session ends aborted (COMMIT answers ROLLBACK). */
async function expectRefused(mode: Mode, before: readonly string[], statement: string, words: RegExp): Promise<void> {
  await withClient(async (client) => {
    if (mode === 'transaction block') await client.query('BEGIN');
    for (const sql of before) await client.query(sql);
    const error = await failure(() => client.query(statement));
    expect(error.code).toBe('0A000');
    expect(error.message).toMatch(words);
    expect(error.message).not.toContain(SECRET);
    if (mode === 'transaction block') {
      expect((await failure(() => client.query('SELECT 1'))).code).toBe('25P02');
      expect((await client.query('COMMIT')).command).toBe('ROLLBACK');
    }
    expect((await client.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });
}

/** Every text value of every user table, read directly: SECRET is nowhere. */
async function expectSecretNowhere(): Promise<void> {
  const columns = (await direct.query<{ schema: string; table: string; column: string }>(
    `SELECT c.table_schema AS schema, c.table_name AS table, c.column_name AS column FROM information_schema.columns c
      JOIN information_schema.tables t USING (table_schema, table_name)
     WHERE c.table_schema IN ('public', 'other') AND t.table_type = 'BASE TABLE'`,
  )).rows;
  for (const { schema, table, column } of columns) {
    const found = await direct.query(`SELECT 1 FROM "${schema}"."${table}" WHERE "${column}"::text = $1`, [SECRET]);
    expect(found.rowCount, `${schema}.${table}.${column}`).toBe(0);
  }
}

async function columnsOf(table: string, schema = 'public'): Promise<string[]> {
  const rows = (await direct.query<{ name: string }>(
    'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position', [schema, table],
  )).rows;
  return rows.map((row) => row.name);
}

describe.each(MODES)('in %s', (mode) => {
  const s = suffix(mode);

  it('refuses RENAME COLUMN of a protected column', async () => {
    await expectRefused(mode, [], `ALTER TABLE rename_col_${s} RENAME ssn TO tax_id`, new RegExp(`public\\.rename_col_${s}\\.ssn.*RENAME COLUMN.*policy file`));
    expect(await columnsOf(`rename_col_${s}`)).toEqual(['id', 'ssn', 'note']);
    await withClient(async (client) => {
      expect((await failure(() => client.query(`INSERT INTO rename_col_${s} (tax_id) VALUES ($1)`, [SECRET]))).code).toBe('42703');
    });
    await expectSecretNowhere();
  });

  it('refuses RENAME of a table with protected columns, and SET SCHEMA', async () => {
    await expectRefused(mode, [], `ALTER TABLE rename_tab_${s} RENAME TO renamed_${s}`, new RegExp(`RENAME would move table public\\.rename_tab_${s}`));
    await expectRefused(mode, [], `ALTER TABLE set_schema_${s} SET SCHEMA other`, new RegExp(`SET SCHEMA would move table public\\.set_schema_${s}`));
    expect(await columnsOf(`rename_tab_${s}`)).toEqual(['id', 'ssn', 'note']);
    expect(await columnsOf(`set_schema_${s}`)).toEqual(['id', 'ssn', 'note']);
    await expectSecretNowhere();
  });

  it('refuses ALTER COLUMN TYPE of a protected column, not of others', async () => {
    await expectRefused(mode, [], `ALTER TABLE retype_${s} ALTER COLUMN ssn TYPE varchar(64)`, new RegExp(`retype_${s}\\.ssn.*TYPE`));
    await withClient(async (client) => {
      await client.query(`ALTER TABLE retype_${s} ALTER COLUMN note TYPE varchar(64)`);
    });
    expect((await direct.query(`SELECT data_type FROM information_schema.columns WHERE table_name = 'retype_${s}' AND column_name = 'ssn'`)).rows).toEqual([{ data_type: 'text' }]);
  });

  it('refuses renaming a column, or adding one with a default, under a name the policy binds', async () => {
    await expectRefused(mode, [], `ALTER TABLE staging_${s} RENAME note TO ssn`, new RegExp(`staging_${s}\\.ssn.*give its name`));
    await expectRefused(mode, [], `ALTER TABLE staging_${s} ADD COLUMN ssn text DEFAULT '${SECRET}'`, new RegExp(`staging_${s}\\.ssn.*DEFAULT`));
    expect(await columnsOf(`staging_${s}`)).toEqual(['id', 'note']);
    await expectSecretNowhere();
  });

  it('refuses INHERIT of a table holding rows pgveil did not protect into a protected one', async () => {
    await withClient(async (client) => {
      await client.query(`CREATE TABLE unprotected_${s} (id int, ssn text, note text)`);
      await client.query(`INSERT INTO unprotected_${s} VALUES (1, $1, 'not under a policy')`, [OTHER]);
    });
    await expectRefused(mode, [], `ALTER TABLE unprotected_${s} INHERIT loose_${s}`, new RegExp(`INHERIT.*loose_${s}`));
    expect((await direct.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'loose_${s}'::regclass`)).rows).toEqual([{ n: 0 }]);
  });

  it('protects CREATE TABLE AS / LIKE copies: tokens are copied, never plaintext', async () => {
    await withClient(async (client) => {
      await client.query(`INSERT INTO loose_${s} (id, ssn) VALUES (1, $1)`, [SECRET]);
      if (mode === 'transaction block') await client.query('BEGIN');
      await client.query(`CREATE TABLE snapshot_${s} AS SELECT id, ssn FROM loose_${s}`);
      await client.query(`CREATE TABLE shaped_${s} (LIKE loose_${s})`);
      // New tables are not under a policy unless the policy file names them; they get what is written.
      await client.query(`INSERT INTO snapshot_${s} (id, ssn) VALUES (2, $1)`, [OTHER]);
      if (mode === 'transaction block') await client.query('COMMIT');
    });
    const stored = (await direct.query(`SELECT ssn FROM loose_${s} WHERE id = 1`)).rows[0]?.ssn;
    expect((await direct.query(`SELECT ssn FROM snapshot_${s} ORDER BY id`)).rows).toEqual([{ ssn: stored }, { ssn: OTHER }]);
    await expectSecretNowhere();
  });
});

describe('DDL the catalog cannot see yet', () => {
  it('ADD COLUMN a policy names: protected in autocommit, refused in the transaction block', async () => {
    await withClient(async (client) => {
      await client.query('ALTER TABLE add_col_ac ADD COLUMN ssn2 text');
      await client.query('INSERT INTO add_col_ac (id, ssn2) VALUES (1, $1)', [SECRET]);
      expect((await client.query('SELECT ssn2 FROM add_col_ac WHERE id = 1')).rows).toEqual([{ ssn2: SECRET }]);
    });
    await expectRefused('transaction block', ['ALTER TABLE add_col_tx ADD COLUMN ssn2 text'], `INSERT INTO add_col_tx (id, ssn2) VALUES (1, '${SECRET}')`, /add_col_tx has protected columns.*commit the DDL first/);
    expect(await columnsOf('add_col_tx')).toEqual(['id', 'ssn', 'note']);
    await expectSecretNowhere();
  });

  it('columns dropped and re-added (positions moved): protected in autocommit, refused in the block', async () => {
    const reorder = (table: string): string[] => [`ALTER TABLE ${table} DROP COLUMN id`, `ALTER TABLE ${table} ADD COLUMN id int`];
    const positional = (table: string): string => `INSERT INTO ${table} VALUES ('${SECRET}', '${OTHER}', 1)`;
    await withClient(async (client) => {
      for (const sql of reorder('reorder_ac')) await client.query(sql);
      await client.query(positional('reorder_ac'));
      expect((await client.query('SELECT ssn, note FROM reorder_ac WHERE id = 1')).rows).toEqual([{ ssn: SECRET, note: OTHER }]);
    });
    await expectRefused('transaction block', reorder('reorder_tx'), positional('reorder_tx'), /reorder_tx has protected columns/);
    // One text, one implicit transaction: refused as a whole, nothing runs.
    await withClient(async (client) => {
      const error = await failure(() => client.query(`${reorder('reorder_tx').join('; ')}; ${positional('reorder_tx')}`));
      expect(error.message).toMatch(/reorder_tx has protected columns/);
    });
    expect(await columnsOf('reorder_tx')).toEqual(['id', 'ssn', 'note']);
    await expectSecretNowhere();
  });

  it('DROP and re-CREATE of a protected table: protected in autocommit, the name refused in the block', async () => {
    const recreate = (table: string): string[] => [`DROP TABLE ${table}`, `CREATE TABLE ${table} (ssn text, id text)`];
    await withClient(async (client) => {
      for (const sql of recreate('recreate_ac')) await client.query(sql);
      await client.query(`INSERT INTO recreate_ac VALUES ('${SECRET}', 'a')`);
      await client.query('INSERT INTO recreate_ac (id, ssn) VALUES ($1, $2)', ['b', SECRET]);
      expect((await client.query('SELECT ssn FROM recreate_ac ORDER BY id')).rows).toEqual([{ ssn: SECRET }, { ssn: SECRET }]);
    });
    await expectRefused('transaction block', recreate('recreate_tx'), `INSERT INTO recreate_tx VALUES ('${SECRET}', 'a')`, /recreate_tx was created.*may have protected columns/);
    await expectRefused('transaction block', ['DROP TABLE recreate_tx'], `SELECT * FROM recreate_tx WHERE ssn = '${SECRET}'`, /recreate_tx has protected columns/);
    expect(await columnsOf('recreate_tx')).toEqual(['id', 'ssn', 'note']);
    await expectSecretNowhere();
  });

  it('pipelined DDL (extended protocol, before its answer): the write is refused or protected, never plaintext', async () => {
    const session = await openRawSession(harness.via(APP));
    const run = (text: string, values: string[] = []): Buffer[] => [
      serialize.parse({ text }), serialize.bind({ values }), serialize.execute(), serialize.sync(),
    ];
    session.send([
      ...run('ALTER TABLE pipeline_ac DROP COLUMN id'),
      ...run('ALTER TABLE pipeline_ac ADD COLUMN id int'),
      ...run('INSERT INTO pipeline_ac VALUES ($1, $2, 1)', [SECRET, OTHER]),
    ].flat());
    const replies = await session.readUntilReady(3);
    session.close();
    const errors = replies.filter((message) => message.type === 'E').map((message) => message.body.toString());
    expect(errors.every((error) => error.includes('0A000') && error.includes('pipeline_ac has protected columns'))).toBe(true);
    expect(await columnsOf('pipeline_ac')).toEqual(['ssn', 'note', 'id']);
    await expectSecretNowhere();
  });

  it('DDL pgveil cannot read (a DO block) makes protected tables wait for the commit', async () => {
    // The table name is built at run time: the DO block itself names no protected table.
    const doBlock = "DO $$ BEGIN EXECUTE 'ALTER TABLE dyn' || 'amic_tx DROP COLUMN id'; EXECUTE 'ALTER TABLE dyn' || 'amic_tx ADD COLUMN id int'; END $$";
    await expectRefused('transaction block', [doBlock], `INSERT INTO dynamic_tx VALUES ('${SECRET}', '${OTHER}', 1)`, /dynamic_tx has protected columns/);
    await withClient(async (client) => {
      await client.query(doBlock.replace(/amic_tx/g, 'amic_ac'));
      await client.query(`INSERT INTO dynamic_ac VALUES ('${SECRET}', '${OTHER}', 1)`);
    });
    await expectSecretNowhere();
  });

  it('keeps unrelated migrations in a transaction block working, and safe ones on protected tables', async () => {
    await withClient(async (client) => {
      await client.query('BEGIN');
      await client.query('CREATE TABLE lookup (code text PRIMARY KEY, label text)');
      await client.query("INSERT INTO lookup VALUES ('a', 'first')");
      await client.query('INSERT INTO lookup VALUES ($1, $2)', ['b', 'second']);
      await pipeline(Readable.from(['c\tthird\n']), client.query(copyFrom('COPY lookup FROM STDIN')));
      await client.query('ALTER TABLE plain ADD COLUMN extra text, DROP COLUMN note');
      await client.query("INSERT INTO plain VALUES (1, 'x')");
      await client.query('CREATE VIEW lookup_view AS SELECT * FROM lookup');
      expect((await client.query('SELECT count(*)::int AS n FROM lookup_view')).rows).toEqual([{ n: 3 }]);
      await client.query('ALTER TABLE plain RENAME TO plain_renamed');
      await client.query("UPDATE plain_renamed SET extra = 'y' WHERE id = $1", [1]);
      // On a protected table, appending an unprotected column keeps every position: no need to wait.
      await client.query('ALTER TABLE loose_tx ADD COLUMN loyalty int');
      await client.query('UPDATE loose_tx SET loyalty = 1');
      await client.query(`INSERT INTO loose_tx (id, ssn, loyalty) VALUES (7, '${SECRET}', 2)`);
      await client.query('COMMIT');
      expect((await client.query('SELECT ssn, loyalty FROM loose_tx WHERE id = 7')).rows).toEqual([{ ssn: SECRET, loyalty: 2 }]);
    });
    expect((await direct.query('SELECT * FROM plain_renamed')).rows).toEqual([{ id: 1, extra: 'y' }]);
    expect((await direct.query('SELECT count(*)::int AS n FROM lookup')).rows).toEqual([{ n: 3 }]);
    await expectSecretNowhere();
  });
});
