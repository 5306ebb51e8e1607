import { describe, expect, it } from 'vitest';
import { formatPolicyIssue, PolicyError, type PolicyIssue } from '../../src/policy/policyError.js';
import { loadPolicyFile, parsePolicies, readPolicyText } from '../../src/policy/policyParser.js';
import { parseColumnName } from '../../src/policy/qualifiedName.js';

const FILE = 'config/policies.yaml';

function lines(...rows: string[]): string {
  return `${rows.join('\n')}\n`;
}

function errorsOf(text: string): string[] {
  try {
    parsePolicies(text, FILE);
  } catch (err) {
    if (err instanceof PolicyError) return err.issues.map(formatPolicyIssue);
    throw err;
  }
  throw new Error('expected a PolicyError');
}

function warningsOf(text: string): string[] {
  return readPolicyText(text, FILE).issues.filter((i: PolicyIssue) => i.severity === 'warning').map(formatPolicyIssue);
}

describe('parsePolicies: a valid file', () => {
  const set = parsePolicies(lines(
    'columns:',
    '  public.customers.ssn:',
    '    kind: ssn',
    '    method: fpe',
    '    scope: customers',
    '    reveal: { app: plaintext, support: mask }',
    '  Public.Customers.Email:',
    '    kind: email',
    '  \'crm."Contacts"."FullName"\':',
    '    kind: name',
    '    lang: de',
    '    noise: 0',
    '    reveal: { "*": redact, app: plaintext }',
  ), FILE);

  it('applies the defaults (tokenise, no-scope, noise 0, other roles see token)', () => {
    const email = set.get('public', 'customers', 'email');
    expect(email).toMatchObject({ kind: 'email', method: 'tokenise', scope: 'no-scope', noise: 0, otherRoles: 'token', key: 'Public.Customers.Email' });
    expect(email?.lang).toBeUndefined();
    expect(email?.engineOptions).toEqual({ method: 'tokenise', scope: 'no-scope', noise: 0 });
    expect([...(email?.reveal ?? [])]).toEqual([]);
  });

  it('folds unquoted names to lower case and keeps quoted ones exactly, as PostgreSQL does', () => {
    expect(set.get('public', 'customers', 'ssn')?.method).toBe('fpe');
    expect(set.get('public', 'Customers', 'email')).toBeUndefined();
    expect(set.get('crm', 'Contacts', 'FullName')?.engineOptions).toEqual({ method: 'tokenise', scope: 'no-scope', noise: 0, lang: 'de' });
    expect(set.get('crm', 'contacts', 'fullname')).toBeUndefined();
  });

  it('knows its tables, roles, reveal maps and where each policy is written', () => {
    expect(set.tables()).toEqual([{ schema: 'public', table: 'customers' }, { schema: 'crm', table: 'Contacts' }]);
    expect([...(set.table('public', 'customers')?.keys() ?? [])]).toEqual(['ssn', 'email']);
    expect(set.roles).toEqual(['app', 'support']);
    const ssn = set.get('public', 'customers', 'ssn');
    expect(Object.fromEntries(ssn?.reveal ?? [])).toEqual({ app: 'plaintext', support: 'mask' });
    expect(ssn?.source).toEqual({ file: FILE, line: 2, column: 3 });
    expect(set.get('crm', 'Contacts', 'FullName')?.otherRoles).toBe('redact');
  });

  it('is immutable', () => {
    const ssn = set.get('public', 'customers', 'ssn');
    expect(Object.isFrozen(set)).toBe(true);
    expect(Object.isFrozen(ssn)).toBe(true);
    expect(Object.isFrozen(set.columns)).toBe(true);
    expect(() => { (ssn as { method: string }).method = 'passthrough'; }).toThrow(TypeError);
    expect((ssn?.reveal as unknown as { set?: unknown }).set).toBeUndefined();
  });

  it('an empty file is an empty set, with a warning', () => {
    const empty = parsePolicies('', FILE);
    expect(empty.columns).toEqual([]);
    expect(empty.warnings.map(formatPolicyIssue)).toEqual([`${FILE}: columns: no column policies: the proxy passes every column through unchanged`]);
  });
});

describe('parsePolicies: every mistake, with file:line:column and the valid choices', () => {
  it('unknown method, kind, lang and view', () => {
    expect(errorsOf(lines(
      'columns:',
      '  public.customers.ssn:',
      '    kind: sssn',
      '    method: fp',
      '  public.customers.full_name:',
      '    kind: name',
      '    lang: jp',
      '    reveal:',
      '      app: plain',
    ))).toEqual([
      `${FILE}:3:11: columns."public.customers.ssn".kind: unknown kind "sssn"; valid: address, uuid, text, phone, ipv4, ssn, price, date, latlng, name, city, email, ccn, numeric`,
      `${FILE}:4:13: columns."public.customers.ssn".method: unknown method "fp"; valid: tokenise, fpe, mask, redact, passthrough`,
      `${FILE}:7:11: columns."public.customers.full_name".lang: unknown lang "jp"; valid: en, de, fr, es, it, ru, ar, si, th, hi, ja, ko, zh, te, kn, ta, bn, pa, gu, or, ml`,
      `${FILE}:9:12: columns."public.customers.full_name".reveal.app: unknown view "plain"; valid: plaintext, token, mask, redact`,
    ]);
  });

  it('unknown keys at every level, pointing at the key', () => {
    expect(errorsOf(lines(
      'colums: {}',
      'columns:',
      '  public.customers.ssn:',
      '    kind: ssn',
      '    methd: fpe',
    ))).toEqual([
      `${FILE}:1:1: colums: unknown key "colums"; valid: columns, privileges`,
      `${FILE}:5:5: columns."public.customers.ssn".methd: unknown key "methd"; valid: kind, method, scope, noise, lang, reveal`,
    ]);
  });

  it('a missing kind, a column that is no mapping, a bad scope', () => {
    expect(errorsOf(lines(
      'columns:',
      '  public.customers.ssn:',
      '    method: fpe',
      '  public.customers.email: email',
      '  public.customers.phone:',
      '    kind: phone',
      '    scope: ""',
    ))).toEqual([
      `${FILE}:3:5: columns."public.customers.ssn".kind: is required; valid: address, uuid, text, phone, ipv4, ssn, price, date, latlng, name, city, email, ccn, numeric`,
      `${FILE}:4:27: columns."public.customers.email": must be a mapping with kind, method, scope, noise, lang, reveal (kind is required)`,
      `${FILE}:7:12: columns."public.customers.phone".scope: must be a non-empty string of at most 256 bytes (quote numbers: scope: "2024")`,
    ]);
  });

  it('noise: a non-negative integer, with tokenise only', () => {
    expect(errorsOf(lines(
      'columns:',
      '  public.a.b:',
      '    kind: ssn',
      '    noise: -1',
      '  public.a.c:',
      '    kind: ssn',
      '    noise: 1.5',
      '  public.a.d:',
      '    kind: ssn',
      '    method: fpe',
      '    noise: 2',
      '  public.a.e:',
      '    kind: ssn',
      '    noise: "2"',
    ))).toEqual([
      `${FILE}:4:12: columns."public.a.b".noise: must be a non-negative integer (0 to 1000000); got "-1"`,
      `${FILE}:7:12: columns."public.a.c".noise: must be a non-negative integer (0 to 1000000); got "1.5"`,
      `${FILE}:11:12: columns."public.a.d".noise: noise applies to method tokenise only; fpe is deterministic. Remove noise or use method tokenise`,
      `${FILE}:14:12: columns."public.a.e".noise: must be a non-negative integer (0 to 1000000); got "2"`,
    ]);
  });

  it('lang on a kind without lang', () => {
    expect(errorsOf(lines(
      'columns:',
      '  public.a.b:',
      '    kind: ssn',
      '    lang: en',
    ))).toEqual([
      `${FILE}:4:11: columns."public.a.b".lang: lang applies only to kinds address, text, name, city; ssn has none. Remove it`,
    ]);
  });

  it('plaintext over a one-way method, mask over redact, bad role names', () => {
    expect(errorsOf(lines(
      'columns:',
      '  public.a.b:',
      '    kind: ccn',
      '    method: mask',
      '    reveal: { app: plaintext, support: mask }',
      '  public.a.c:',
      '    kind: text',
      '    method: redact',
      '    reveal:',
      '      support: mask',
      '      "*": plaintext',
      '      "bad role": token',
    ))).toEqual([
      `${FILE}:5:20: columns."public.a.b".reveal.app: cannot be plaintext: method mask is one-way, so the database keeps no plaintext to reveal. Use method fpe or tokenise (reversible), or method passthrough with mask for the roles that must not see plaintext`,
      `${FILE}:10:16: columns."public.a.c".reveal.support: cannot be mask: method redact keeps only the layout, so there is nothing to mask on read. Use token (the redacted value) or redact (NULL), or method mask`,
      `${FILE}:11:12: columns."public.a.c".reveal."*": cannot be plaintext: method redact is one-way, so the database keeps no plaintext to reveal. Use method fpe or tokenise (reversible), or method passthrough with mask for the roles that must not see plaintext`,
      `${FILE}:12:7: columns."public.a.c".reveal."bad role": "bad role" is not a role name (1-64 letters, digits, _ . : -); "*" stands for every role not listed`,
    ]);
  });

  it('malformed schema.table.column keys, and two keys for one column', () => {
    const errors = errorsOf(lines(
      'columns:',
      '  customers.ssn:',
      '    kind: ssn',
      '  public.customers.ssn.extra:',
      '    kind: ssn',
      '  public..ssn:',
      '    kind: ssn',
      '  \'public."customers.ssn\':',
      '    kind: ssn',
      '  public.customers.e-mail:',
      '    kind: email',
      '  public.customers.email:',
      '    kind: email',
      '  PUBLIC.Customers.EMAIL:',
      '    kind: emial',
    ));
    const advice = 'Write schema.table.column (public.customers.ssn); double-quote names with capitals, dots or spaces: public."Customers"."SSN"';
    expect(errors).toEqual([
      `${FILE}:2:3: columns."customers.ssn": malformed column name: has 2 names, not 3. ${advice}`,
      `${FILE}:4:3: columns."public.customers.ssn.extra": malformed column name: has 4 names, not 3. ${advice}`,
      `${FILE}:6:3: columns."public..ssn": malformed column name: a name is empty. ${advice}`,
      `${FILE}:8:3: columns."public.\\"customers.ssn": malformed column name: a double quote is not closed. ${advice}`,
      `${FILE}:10:3: columns."public.customers.e-mail": malformed column name: "-" is not allowed in an unquoted name (quote the name). ${advice}`,
      `${FILE}:14:3: columns."PUBLIC.Customers.EMAIL": names the same column as "public.customers.email" (line 12): unquoted names fold to lower case, as in PostgreSQL`,
    ]);
  });

  it('YAML syntax errors and duplicate keys', () => {
    expect(errorsOf(lines('columns:', '  public.a.b:', '    kind: ssn', '    kind: ccn'))).toEqual([
      `${FILE}:4:5: YAML syntax: Map keys must be unique`,
    ]);
    expect(errorsOf(lines('columns:', '  public.a.b: {kind: ssn', ''))[0]).toMatch(/^config\/policies\.yaml:\d+:\d+: YAML syntax: /);
  });

  it('a root that is no mapping', () => {
    expect(errorsOf('- a\n- b\n')).toEqual([`${FILE}:1:1: must be a mapping with a \`columns\` key: columns: { public.customers.ssn: { kind: ssn } }`]);
  });

  it('an unreadable file', async () => {
    await expect(loadPolicyFile('test/policy/no-such-file.yaml')).rejects.toThrow('test/policy/no-such-file.yaml: cannot read the policy file (ENOENT)');
  });
});

describe('warnings (the file is still used)', () => {
  it('noise > 0: equality search stops working', () => {
    const text = lines('columns:', '  public.a.b:', '    kind: email', '    noise: 3');
    expect(parsePolicies(text, FILE).get('public', 'a', 'b')?.engineOptions).toEqual({ method: 'tokenise', scope: 'no-scope', noise: 3 });
    expect(warningsOf(text)).toEqual([
      `${FILE}:4:12: columns."public.a.b".noise: noise 3 gives a value a new token on every write: equality search on this column (WHERE col = ..., IN, joins, GROUP BY, unique constraints) stops working. Use noise 0 if the column is searched`,
    ]);
  });

  it('passthrough without "*": roles not listed see plaintext', () => {
    expect(warningsOf(lines('columns:', '  public.a.b:', '    kind: phone', '    method: passthrough', '    reveal: { support: mask }'))).toEqual([
      `${FILE}:4:13: columns."public.a.b".method: method passthrough stores plaintext, and roles not listed in reveal see the value as stored: plaintext. Add "*": mask (or redact) to reveal to hide it from them`,
    ]);
    expect(warningsOf(lines('columns:', '  public.a.b:', '    kind: phone', '    method: passthrough', '    reveal: { "*": mask }'))).toEqual([]);
  });
});

describe('parseColumnName', () => {
  it('reads identifiers as PostgreSQL does', () => {
    expect(parseColumnName('Public.Customers.SSN')).toEqual({ ok: true, name: { schema: 'public', table: 'customers', column: 'ssn' } });
    expect(parseColumnName('"My Schema"."a.b"."Say ""hi"""')).toEqual({ ok: true, name: { schema: 'My Schema', table: 'a.b', column: 'Say "hi"' } });
    expect(parseColumnName('public.kunden.straße')).toEqual({ ok: true, name: { schema: 'public', table: 'kunden', column: 'straße' } });
    expect(parseColumnName('public.t.col$1')).toEqual({ ok: true, name: { schema: 'public', table: 't', column: 'col$1' } });
    expect(parseColumnName('public.t.1col')).toMatchObject({ ok: false });
    expect(parseColumnName(`public.t.${'a'.repeat(64)}`)).toEqual({ ok: false, reason: 'a name is longer than 63 bytes (PostgreSQL truncates such names)' });
    expect(parseColumnName('public.t.""')).toEqual({ ok: false, reason: 'a quoted name is empty' });
  });
});

describe('the shipped policy files', () => {
  it('config/demo-policies.yaml and config/policies.example.yaml are valid without warnings', async () => {
    for (const file of ['config/demo-policies.yaml', 'config/policies.example.yaml']) {
      const set = await loadPolicyFile(file);
      expect(set.warnings).toEqual([]);
      expect(set.columns.length).toBeGreaterThan(5);
    }
  });

  it('the demo uses the roles app, support and analyst and native types via fpe', async () => {
    const set = await loadPolicyFile('config/demo-policies.yaml');
    expect(set.roles).toEqual(['app', 'support', 'analyst']);
    for (const column of ['birth_date', 'ip_address', 'external_id', 'ssn', 'card_number']) {
      expect(set.get('public', 'customers', column)?.method).toBe('fpe');
    }
  });
});
