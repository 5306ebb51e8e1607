/**
 * SQL PREPARE names as an attacker spells them: a quoted name is its own statement ("P" is not p),
 * and a PREPARE the server refuses (the name is taken) leaves the first statement's plan in force.
 * Each EXECUTE stores its ssn argument only as a token, read directly.
 */
import { describe, expect, it } from 'vitest';
import { useAppHarness } from './support/policyHarness.js';

const shared = useAppHarness();

/** Every ssn and note stored for rows whose note starts with `prefix`, read directly. */
async function stored(prefix: string): Promise<string[]> {
  const rows = (await shared.direct.query("SELECT ssn, note FROM customers WHERE note LIKE $1 || '%' ORDER BY id", [prefix])).rows;
  return rows.flatMap((row) => [row.ssn as string | null, row.note as string]).filter((value): value is string => value !== null);
}

describe('SQL PREPARE names and refused PREPAREs', () => {
  it('keeps "P" and p apart: the plan of the one executed protects its argument', async () => {
    await shared.app.query('PREPARE "P"(text) AS INSERT INTO customers (ssn, note) VALUES ($1, \'pn-upper\')');
    await shared.app.query("PREPARE p(text) AS INSERT INTO customers (note) VALUES ('pn-lower ' || $1)");
    await shared.app.query('EXECUTE "P"(\'123-45-6789\')');
    await shared.app.query("EXECUTE \"P\"('123-45-6780')");
    await shared.app.query("EXECUTE p('x')");
    const values = await stored('pn-');
    expect(values).not.toContain('123-45-6789');
    expect(values).not.toContain('123-45-6780');
    expect(values).toContain('pn-lower x');
    expect((await shared.app.query("SELECT ssn FROM customers WHERE note = 'pn-upper' ORDER BY id")).rows.map((row) => row.ssn)).toEqual(['123-45-6789', '123-45-6780']);
    await shared.app.query('DEALLOCATE "P"; DEALLOCATE p');
  });

  it('keeps the first plan when a second PREPARE of the name fails in the same text', async () => {
    await shared.app.query("PREPARE taken(text) AS INSERT INTO customers (ssn, note) VALUES ($1, 'pn-taken')");
    await expect(shared.app.query("PREPARE taken(text) AS INSERT INTO customers (note) VALUES ($1); EXECUTE taken('234-56-7890')")).rejects.toMatchObject({ code: '42P05' });
    await shared.app.query("EXECUTE taken('234-56-7891')");
    const values = await stored('pn-taken');
    expect(values).toHaveLength(2);
    expect(values).not.toContain('234-56-7891');
    await shared.app.query('DEALLOCATE taken');
  });

  it('keeps a statement prepared inside a rolled-back transaction, and its plan', async () => {
    await shared.app.query("BEGIN; PREPARE in_tx(text) AS INSERT INTO customers (ssn, note) VALUES ($1, 'pn-tx'); ROLLBACK");
    const executed = await shared.app.query("EXECUTE in_tx('345-67-8901')").then(() => 'ran', (error: { code?: string }) => error.code);
    const values = await stored('pn-tx');
    expect(values).not.toContain('345-67-8901');
    if (executed === 'ran') expect(values).toHaveLength(2);
    await shared.app.query('DEALLOCATE ALL');
  });

  it('keeps the plan of a statement whose DEALLOCATE failed in an aborted transaction', async () => {
    await shared.app.query("PREPARE kept(text) AS INSERT INTO customers (ssn, note) VALUES ($1, 'pn-kept')");
    await shared.app.query('BEGIN');
    await expect(shared.app.query('SELECT 1 / 0')).rejects.toMatchObject({ code: '22012' });
    await expect(shared.app.query('DEALLOCATE kept')).rejects.toMatchObject({ code: '25P02' });
    await shared.app.query('ROLLBACK');
    await shared.app.query("EXECUTE kept('456-78-9012')");
    const values = await stored('pn-kept');
    expect(values).toHaveLength(2);
    expect(values).not.toContain('456-78-9012');
    await shared.app.query('DEALLOCATE kept');
  });
});
