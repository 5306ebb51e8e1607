/** INSERT / UPDATE / ON CONFLICT / MERGE / data-modifying CTEs: which value feeds which protected column. */
import { describe, expect, it } from 'vitest';
import { CARD, EMAIL, IBAN, SSN, column } from './sqlTestSchema.js';
import {
  analyseOne, byteRange, describeLiterals, describeParams, useSqlParser, type ExpectedLiteral,
} from './sqlTestHelpers.js';
import type { ColumnRef } from '../../src/proxy/sql/index.js';

useSqlParser();

interface Case {
  readonly sql: string;
  readonly params?: readonly (readonly [number, ColumnRef])[];
  readonly literals?: readonly ExpectedLiteral[];
}

const MIXED_SECRET = column('Mixed', 'Secret');

const cases: readonly Case[] = [
  // INSERT … VALUES with a column list
  { sql: 'INSERT INTO customers (name, ssn) VALUES ($1, $2)', params: [[2, SSN]] },
  // the column's own values, through one spelling of its table's name, carry nothing new
  { sql: 'INSERT INTO public.customers (ssn) SELECT ssn FROM public.customers' },
  { sql: 'INSERT INTO customers (ssn) SELECT c.ssn FROM customers c' },
  { sql: 'UPDATE public.customers c SET ssn = c.ssn' },
  { sql: 'INSERT INTO customers (ssn, email) VALUES ($1, $2)', params: [[1, SSN], [2, EMAIL]] },
  { sql: "INSERT INTO customers (note, ssn) VALUES ('Zürich 東京', '123-45-6789')", literals: [["'123-45-6789'", '123-45-6789', SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES ('a'), ('b'), ($1)", params: [[1, SSN]], literals: [["'a'", 'a', SSN], ["'b'", 'b', SSN]] },
  { sql: 'INSERT INTO customers (ssn) VALUES (NULL), (DEFAULT), (NULL::text)' },
  { sql: 'INSERT INTO public.customers AS c (ssn) VALUES ($1)', params: [[1, SSN]] },
  // without a column list: all columns in order
  { sql: "INSERT INTO customers VALUES (1, 'Ann', '111-22-3333', $1)", params: [[1, EMAIL]], literals: [["'111-22-3333'", '111-22-3333', SSN]] },
  { sql: 'INSERT INTO customers VALUES (1, $1)' },
  { sql: 'INSERT INTO customers DEFAULT VALUES' },
  // casts of the value are plain casts: the inner value feeds the column
  { sql: 'INSERT INTO customers (ssn, email) VALUES ($1::text, CAST($2 AS varchar(40)))', params: [[1, SSN], [2, EMAIL]] },
  { sql: "INSERT INTO orders (card) VALUES ('4111'::text::varchar)", literals: [["'4111'", '4111', CARD]] },
  // every constant form the lexer knows
  { sql: "INSERT INTO customers (ssn) VALUES ('it''s')", literals: [["'it''s'", "it's", SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES (E'a\\nb\\'c')", literals: [["E'a\\nb\\'c'", "a\nb'c", SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES (e'\\u00e9\\x41')", literals: [["e'\\u00e9\\x41'", 'éA', SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES (U&'d\\0061t\\+000061')", literals: [["U&'d\\0061t\\+000061'", 'data', SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES (U&'d!0061t' UESCAPE '!')", literals: [["U&'d!0061t' UESCAPE '!'", 'dat', SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES ($$it's$$)", literals: [["$$it's$$", "it's", SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES ($tag$a$$b$tag$)", literals: [['$tag$a$$b$tag$', 'a$$b', SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES ('12'\n'34')", literals: [["'12'\n'34'", '1234', SSN]] },
  { sql: "INSERT INTO customers (ssn) VALUES (N'nat')", literals: [["'nat'", 'nat', SSN]] },
  { sql: "INSERT INTO customers (created, ssn) VALUES (now(), date '2024-01-01')", literals: [["'2024-01-01'", '2024-01-01', SSN]] },
  // numbers: canonical numeric text, negative numbers from the '-' token
  { sql: 'INSERT INTO orders (card) VALUES (4111111111111111)', literals: [['4111111111111111', '4111111111111111', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (-42)', literals: [['-42', '-42', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (- 42)', literals: [['- 42', '-42', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (0)', literals: [['0', '0', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (1_000)', literals: [['1_000', '1000', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (0x1F)', literals: [['0x1F', '31', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (0xFFFFFFFFFFFF)', literals: [['0xFFFFFFFFFFFF', '281474976710655', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (1.50)', literals: [['1.50', '1.50', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (-1.5e-3)', literals: [['-1.5e-3', '-0.0015', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (.5)', literals: [['.5', '0.5', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (1e3)', literals: [['1e3', '1000', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (00012)', literals: [['00012', '12', CARD]] },
  { sql: 'INSERT INTO orders (card) VALUES (true)', literals: [['true', 'true', CARD]] },
  // schemas and quoted identifiers
  { sql: 'INSERT INTO billing.accounts (iban, label) VALUES ($1, $2)', params: [[1, IBAN]] },
  { sql: 'INSERT INTO "Mixed" ("Secret") VALUES ($1)', params: [[1, MIXED_SECRET]] },
  { sql: 'INSERT INTO mixed (secret) VALUES ($1)' },
  // unknown or unprotected tables: the fast path
  { sql: "INSERT INTO plain (ssn) VALUES ('123-45-6789')" },
  { sql: "INSERT INTO audit_log (ssn) VALUES ('123-45-6789')" },
  // ON CONFLICT
  {
    sql: 'INSERT INTO customers (id, ssn) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET ssn = EXCLUDED.ssn, email = $3 RETURNING id, ssn',
    params: [[2, SSN], [3, EMAIL]],
  },
  { sql: "INSERT INTO customers AS c (id, ssn) VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET ssn = c.ssn WHERE c.email = 'y'", literals: [["'x'", 'x', SSN], ["'y'", 'y', EMAIL]] },
  { sql: 'INSERT INTO customers (id, ssn) VALUES ($1, $2) ON CONFLICT (ssn) WHERE email IS NOT NULL DO NOTHING', params: [[2, SSN]] },
  // UPDATE … SET
  { sql: 'UPDATE customers SET ssn = $1, note = $2 WHERE id = $3', params: [[1, SSN]] },
  { sql: "UPDATE customers SET email = 'a@b.c' WHERE ssn = 'x'", literals: [["'a@b.c'", 'a@b.c', EMAIL], ["'x'", 'x', SSN]] },
  { sql: 'UPDATE customers c SET (ssn, note) = ($1, $2) WHERE c.id = 1', params: [[1, SSN]] },
  { sql: 'UPDATE customers SET ssn = DEFAULT, email = NULL, note = lower(email)' },
  { sql: 'UPDATE customers SET ssn = ssn, email = customers.email' },
  { sql: 'UPDATE customers c SET ssn = o.ssn FROM customers o WHERE o.id = c.id + 1' },
  { sql: 'UPDATE customers SET (ssn, email) = (SELECT ssn, email FROM customers WHERE id = 2) WHERE id = 1' },
  { sql: 'UPDATE orders o SET memo = $1 FROM customers c WHERE c.id = o.customer_id AND c.ssn = $2 RETURNING o.card', params: [[2, SSN]] },
  // DELETE
  { sql: 'DELETE FROM customers WHERE ssn = $1 RETURNING *', params: [[1, SSN]] },
  { sql: 'DELETE FROM orders o USING customers c WHERE o.customer_id = c.id AND c.email = $1', params: [[1, EMAIL]] },
  // INSERT … SELECT that only moves tokens within the same column
  { sql: 'INSERT INTO customers (ssn, note) SELECT ssn, note FROM customers WHERE id = $1' },
  { sql: 'INSERT INTO customers (name, note) SELECT name, $1 FROM customers' },
  // data-modifying CTEs
  {
    sql: 'WITH moved AS (DELETE FROM customers WHERE email = $1 RETURNING id, ssn) INSERT INTO orders (customer_id, card) VALUES ($2, $3)',
    params: [[1, EMAIL], [3, CARD]],
  },
  {
    sql: 'WITH added AS (INSERT INTO customers (ssn) VALUES ($1) RETURNING id, ssn) SELECT * FROM added WHERE added.ssn = $2',
    params: [[1, SSN], [2, SSN]],
  },
  // MERGE
  {
    sql: "MERGE INTO customers c USING plain p ON c.id = p.id WHEN MATCHED AND c.email = $1 THEN UPDATE SET ssn = $2 WHEN NOT MATCHED THEN INSERT (id, ssn) VALUES (p.id, 'z')",
    params: [[1, EMAIL], [2, SSN]], literals: [["'z'", 'z', SSN]],
  },
  { sql: 'MERGE INTO customers c USING customers s ON c.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN DO NOTHING' },
];

describe('values written into protected columns', () => {
  it.each(cases)('$sql', ({ sql, params = [], literals = [] }) => {
    const statement = analyseOne(sql);
    expect(statement.rejection).toBeUndefined();
    expect(describeParams(statement)).toEqual(params);
    expect(describeLiterals(sql, statement)).toEqual(literals);
  });

  it('gives exact byte offsets after multi-byte text', () => {
    const sql = "INSERT INTO customers (note, ssn) VALUES ('Zürich 東京', '123-45-6789')";
    const [literal] = analyseOne(sql).literals;
    expect(literal).toEqual({ ...byteRange(sql, "'123-45-6789'"), value: '123-45-6789', column: SSN });
    // ü takes 2 bytes and 東, 京 3 each: 5 bytes more than UTF-16 code units before the literal.
    expect(literal?.start).toBe(sql.indexOf("'123") + 5);
  });

  it('reports a literal at byte 0 of a statement (location 0 is omitted from the parse tree)', () => {
    const sql = "UPDATE customers SET ssn = '1'";
    expect(analyseOne(sql).literals[0]).toMatchObject(byteRange(sql, "'1'"));
  });

  it('names the statement type and its byte range (the last one runs to the end of the text)', () => {
    const statement = analyseOne('  UPDATE customers SET ssn = $1  ');
    expect(statement).toMatchObject({ type: 'UpdateStmt', start: 2, end: 33 });
  });
});
