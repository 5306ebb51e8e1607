import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgCatalogQuery } from '../../src/policy/catalogConnection.js';
import type { CatalogQuery } from '../../src/policy/catalogReader.js';
import { validateAgainstCatalog } from '../../src/policy/catalogValidation.js';
import { formatPolicyIssue, type PolicyIssue } from '../../src/policy/policyError.js';
import { loadPolicyFile, parsePolicies } from '../../src/policy/policyParser.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { CUSTOMERS_TABLE_SQL as DEMO_TABLE_SQL } from '../../src/cli/demo/demoSchema.js';

const FILE = 'policies.yaml';

let db: TestPostgres;
let client: pg.Client;
let query: CatalogQuery;

beforeAll(async () => {
  db = await startTestPostgres();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(DEMO_TABLE_SQL);
  await client.query(`
    CREATE SCHEMA crm;
    CREATE TABLE crm."Contacts" ("FullName" text, email text);
    CREATE VIEW public.customer_view AS SELECT * FROM public.customers;
    CREATE TABLE public.typed (
      d date, u uuid, i inet, c cidr, n numeric(12,2), i4 integer, f float8, ts timestamp,
      v8 varchar(8), v15 varchar(15), v40 varchar(40), v64 varchar(64), v200 varchar(200),
      ch40 char(40), t text, arr text[]
    );
    CREATE DOMAIN short_text AS varchar(8);
    CREATE DOMAIN shorter_still AS short_text;
    CREATE DOMAIN any_text AS text;
    CREATE TABLE public.domains (a short_text, b shorter_still, c any_text);
  `);
  query = pgCatalogQuery(client);
}, 180_000);

afterAll(async () => {
  await client?.end();
  await db?.stop();
});

/** One policy per line pair: `column: { ... }` under public.typed unless qualified. */
async function check(entries: Record<string, string>): Promise<string[]> {
  const text = `columns:\n${Object.entries(entries).map(([key, body]) => `  ${key}: ${body}`).join('\n')}\n`;
  const set = parsePolicies(text, FILE);
  return (await validateAgainstCatalog(set, query)).map((i: PolicyIssue) => `${i.severity} ${formatPolicyIssue(i)}`);
}

describe('validateAgainstCatalog', () => {
  it('the demo policies fit the demo table exactly', async () => {
    const set = await loadPolicyFile('config/demo-policies.yaml');
    expect(await validateAgainstCatalog(set, query)).toEqual([]);
  });

  it('unknown tables, with the same name in another schema or case as a hint', async () => {
    expect(await check({
      'public.customerz.ssn': '{ kind: ssn }',
      'public.contacts.email': '{ kind: email }',
      'public.customerz.email': '{ kind: email }',
    })).toEqual([
      `error ${FILE}:2:3: columns."public.customerz.ssn": table public.customerz does not exist`,
      `error ${FILE}:3:3: columns."public.contacts.email": table public.contacts does not exist; did you mean crm."Contacts"? (names with capitals are written in double quotes)`,
      `error ${FILE}:4:3: columns."public.customerz.email": table public.customerz does not exist`,
    ]);
  });

  it('unknown columns list the table\'s columns, or the one that differs in case', async () => {
    expect(await check({
      'public.customers.ssnn': '{ kind: ssn }',
      'crm."Contacts".fullname': '{ kind: name }',
    })).toEqual([
      `error ${FILE}:2:3: columns."public.customers.ssnn": column ssnn does not exist in public.customers; its columns: id, full_name, email, ssn, phone, card_number, birth_date, city, ip_address, external_id`,
      `error ${FILE}:3:3: columns."crm.\\"Contacts\\".fullname": column fullname does not exist in crm."Contacts"; did you mean "FullName"? (names with capitals are written in double quotes)`,
    ]);
    expect(await check({ 'crm."Contacts"."FullName"': '{ kind: name }' })).toEqual([]);
  });

  it('views are refused: columns are found by the table that stores them', async () => {
    expect(await check({ 'public.customer_view.ssn': '{ kind: ssn }' })).toEqual([
      `error ${FILE}:2:3: columns."public.customer_view.ssn": public.customer_view is a view: pgveil finds result columns by the table that stores them; put the policy on the column of the underlying table`,
    ]);
  });

  it('tokenise fits text columns only, and says what to do instead', async () => {
    expect(await check({
      'public.typed.d': '{ kind: date }',
      'public.typed.u': '{ kind: uuid }',
      'public.typed.i': '{ kind: ipv4 }',
      'public.typed.n': '{ kind: numeric }',
      'public.typed.i4': '{ kind: numeric }',
      'public.typed.f': '{ kind: ssn }',
      'public.typed.arr': '{ kind: email }',
      'public.typed.t': '{ kind: email }',
    })).toEqual([
      `error ${FILE}:2:3: columns."public.typed.d": tokens are text, longer than the value, and do not fit a date column; use method fpe to keep a date, or change the column to text`,
      `error ${FILE}:3:3: columns."public.typed.u": tokens are text, longer than the value, and do not fit a uuid column; use method fpe to keep a uuid, or change the column to text`,
      `error ${FILE}:4:3: columns."public.typed.i": tokens are text, longer than the value, and do not fit an inet column; use method fpe to keep an inet, or change the column to text`,
      `error ${FILE}:5:3: columns."public.typed.n": tokens are text, longer than the value, and do not fit a numeric(12,2) column; use method fpe to keep a numeric(12,2), or change the column to text`,
      `error ${FILE}:6:3: columns."public.typed.i4": tokens are text, longer than the value, and do not fit an integer column; change the column to numeric and use method fpe, or change it to text`,
      `error ${FILE}:7:3: columns."public.typed.f": tokens are text, longer than the value, and do not fit a double precision column; change the column to text`,
      `error ${FILE}:8:3: columns."public.typed.arr": text[] is an array: pgveil protects single values; store one value per row, or use method passthrough`,
    ]);
  });

  it('tokenise into varchar(n)/char(n): tokens must fit (sized with the engine, noise and lang included)', async () => {
    expect(await check({
      'public.typed.v8': '{ kind: ssn }',
      'public.typed.v40': '{ kind: ssn }',
      'public.typed.v64': '{ kind: name }',
      'public.typed.v200': '{ kind: name }',
      'public.typed.ch40': '{ kind: ssn }',
    })).toEqual([
      `error ${FILE}:2:3: columns."public.typed.v8": character varying(8) is too short for tokens of kind ssn: a 11-character value takes a 37-character token. Make the column varchar(37) or longer, or text, or use method fpe (keeps the length)`,
      `error ${FILE}:4:3: columns."public.typed.v64": character varying(64) is too short for tokens of kind name: a 64-character value takes a 123-character token. Make the column varchar(123) or longer, or text, or use method fpe (keeps the length)`,
      `warning ${FILE}:6:3: columns."public.typed.ch40": character(40) pads tokens shorter than its length with spaces, which come back on read; prefer varchar or text`,
    ]);
    // A nonce makes tokens longer; scripts with combining marks much longer.
    const noisy = await check({ 'public.typed.v40': '{ kind: ssn, noise: 1 }' });
    expect(noisy.filter((m) => m.startsWith('error'))).toEqual([
      expect.stringMatching(/^error policies\.yaml:2:3: columns\."public\.typed\.v40": character varying\(40\) is too short for tokens of kind ssn: a 11-character value takes a \d+-character token with noise 1\./),
    ]);
    expect(await check({ 'public.typed.v200': '{ kind: name, lang: th }' })).toEqual([
      expect.stringMatching(/^error policies\.yaml:2:3: columns\."public\.typed\.v200": character varying\(200\) is too short for tokens of kind name: a 64-character value takes a \d{3}-character token\./),
    ]);
  });

  it('fpe keeps date, inet, uuid and numeric; not cidr, integers, float or other kinds', async () => {
    expect(await check({
      'public.typed.d': '{ kind: date, method: fpe }',
      'public.typed.i': '{ kind: ipv4, method: fpe }',
      'public.typed.u': '{ kind: uuid, method: fpe }',
      'public.typed.n': '{ kind: price, method: fpe }',
      'public.typed.v8': '{ kind: date, method: fpe }',
      'public.typed.t': '{ kind: ccn, method: fpe }',
    })).toEqual([]);
    expect(await check({
      'public.typed.ts': '{ kind: date, method: fpe }',
      'public.typed.c': '{ kind: ipv4, method: fpe }',
      'public.typed.i4': '{ kind: numeric, method: fpe }',
      'public.typed.f': '{ kind: latlng, method: fpe }',
      'public.typed.d': '{ kind: ssn, method: fpe }',
      'public.typed.v8': '{ kind: ipv4, method: fpe }',
    })).toEqual([
      `error ${FILE}:2:3: columns."public.typed.ts": fpe output of kind date is not a valid timestamp without time zone; change the column to date or text`,
      `error ${FILE}:3:3: columns."public.typed.c": fpe encrypts the host bits too, so a cidr value would not stay a valid cidr; change the column to inet or text`,
      `error ${FILE}:4:3: columns."public.typed.i4": fpe keeps the digit count, which can overflow integer (a large value may encrypt past its maximum); change the column to numeric or text`,
      `error ${FILE}:5:3: columns."public.typed.f": double precision drops trailing zeros and uses exponents, so fpe values would not decrypt; change the column to numeric or text`,
      `error ${FILE}:6:3: columns."public.typed.d": fpe output of kind ssn is not a valid date; change the column to text`,
      `error ${FILE}:7:3: columns."public.typed.v8": character varying(8) is too short for fpe of kind ipv4: outputs take up to 15 characters (18 with a /prefix); make the column varchar(18) or longer, or inet, or text`,
    ]);
    expect(await check({ 'public.typed.v15': '{ kind: ipv4, method: fpe }' })).toEqual([]);
  });

  it('mask and redact at rest: only where their output stays a valid value of the type', async () => {
    expect(await check({
      'public.typed.d': '{ kind: date, method: mask }',
      'public.typed.c': '{ kind: ipv4, method: mask }',
      'public.typed.i4': '{ kind: numeric, method: mask }',
      'public.typed.v8': '{ kind: date, method: redact }',
    })).toEqual([]);
    expect(await check({
      'public.typed.d': '{ kind: ssn, method: mask }',
      'public.typed.u': '{ kind: uuid, method: redact }',
      'public.typed.i': '{ kind: email, method: mask }',
    })).toEqual([
      `error ${FILE}:2:3: columns."public.typed.d": mask output of kind ssn (e.g. "***-**-6789") is not a valid date; change the column to text`,
      `error ${FILE}:3:3: columns."public.typed.u": redact output of kind uuid (e.g. "********-****-****-****-************") is not a valid uuid; use method fpe (keeps a uuid) with reveal redact (NULL) for the roles concerned, or change the column to text`,
      `error ${FILE}:4:3: columns."public.typed.i": mask output of kind email (e.g. "j*******@example.com") is not a valid inet; change the column to text`,
    ]);
  });

  it('passthrough fits any type; a mask view that is no value of the type is a warning', async () => {
    expect(await check({
      'public.typed.i4': '{ kind: numeric, method: passthrough, reveal: { "*": mask } }',
      'public.typed.d': '{ kind: date, method: passthrough, reveal: { "*": redact } }',
      'public.typed.f': '{ kind: ssn, method: passthrough, reveal: { support: mask, "*": redact } }',
    })).toEqual([
      `warning ${FILE}:4:3: columns."public.typed.f": roles that see mask get the mask of kind ssn (e.g. "***-**-6789"), which is not a valid double precision: clients that parse the type may fail. Give them redact, or change the column to text`,
    ]);
  });

  it('domains are checked as their base type, with the domain\'s length', async () => {
    const issues = await check({
      'public.domains.a': '{ kind: ssn }',
      'public.domains.b': '{ kind: ssn }',
      'public.domains.c': '{ kind: ssn }',
    });
    expect(issues).toEqual([
      `error ${FILE}:2:3: columns."public.domains.a": short_text is too short for tokens of kind ssn: a 11-character value takes a 37-character token. Make the column varchar(37) or longer, or text, or use method fpe (keeps the length)`,
      `error ${FILE}:3:3: columns."public.domains.b": shorter_still is too short for tokens of kind ssn: a 11-character value takes a 37-character token. Make the column varchar(37) or longer, or text, or use method fpe (keeps the length)`,
    ]);
  });
});
