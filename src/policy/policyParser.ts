import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { readColumnEntry } from './columnEntryReader.js';
import { IssueCollector, quoteValue } from './issueCollector.js';
import { PolicyError, errorsOf, inFileOrder, warningsOf, type PolicyIssue } from './policyError.js';
import { createPolicySet } from './policySet.js';
import { ROLE_NAME } from '../config/index.js';
import { STATEMENT_PRIVILEGES, type ColumnPolicy, type PolicySet, type StatementPrivilege } from './policyTypes.js';
import { formatColumnName, parseColumnName } from './qualifiedName.js';

const TOP_LEVEL_KEYS = ['columns', 'privileges'] as const;
const MAX_SYNTAX_ERRORS = 5;

/** What the static checks make of a file: the columns that passed, and every issue found. */
export interface PolicyReadResult {
  readonly file: string;
  /** Valid entries only, in file order; complete when `issues` holds no error. */
  readonly columns: readonly ColumnPolicy[];
  /** Errors and warnings, in file order. */
  readonly issues: readonly PolicyIssue[];
  /** The `privileges` section: statement rules lifted per role. */
  readonly privileges: ReadonlyMap<string, ReadonlySet<StatementPrivilege>>;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads policy text without throwing: the checker shows the valid columns next to the mistakes.
 * `file` is the name shown in messages.
 */
export function readPolicyText(text: string, file: string): PolicyReadResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // One syntax mistake often cascades: the first few are enough.
    const issues = doc.errors.slice(0, MAX_SYNTAX_ERRORS).map((e): PolicyIssue => {
      const pos = lineCounter.linePos(e.pos[0]);
      const message = (e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
      return { file, line: pos.line, column: pos.col, path: '', message: `YAML syntax: ${message}`, severity: 'error' };
    });
    return { file, columns: [], issues, privileges: new Map() };
  }
  const issues = new IssueCollector(file, doc, lineCounter);
  const root: unknown = doc.toJS({ maxAliasCount: 100 });
  const columns: ColumnPolicy[] = [];
  const privileges = new Map<string, Set<StatementPrivilege>>();
  if (root !== null && root !== undefined && !isMapping(root)) {
    issues.add([], 'must be a mapping with a `columns` key: columns: { public.customers.ssn: { kind: ssn } }');
  } else {
    const top = root ?? {};
    for (const key of Object.keys(top)) {
      if (!(TOP_LEVEL_KEYS as readonly string[]).includes(key)) {
        issues.add([key], `unknown key ${quoteValue(key)}; valid: ${TOP_LEVEL_KEYS.join(', ')}`, { atKey: true });
      }
    }
    readColumns(issues, top['columns'], columns);
    readPrivileges(issues, top['privileges'], privileges);
  }
  return { file, columns, issues: inFileOrder(issues.issues), privileges };
}

function readPrivileges(issues: IssueCollector, value: unknown, out: Map<string, Set<StatementPrivilege>>): void {
  if (value === undefined || value === null) return;
  const example = 'privileges: { migrator: [code, derived] }';
  if (!isMapping(value)) {
    issues.add(['privileges'], `must be a mapping of role to the statement rules it is exempt from, e.g. ${example}`);
    return;
  }
  for (const [role, granted] of Object.entries(value)) {
    const path = ['privileges', role];
    if (!ROLE_NAME.test(role)) issues.add(path, 'must be a role name', { atKey: true });
    if (!Array.isArray(granted)) {
      issues.add(path, `must be a list of: ${STATEMENT_PRIVILEGES.join(', ')}`);
      continue;
    }
    const set = new Set<StatementPrivilege>();
    granted.forEach((item: unknown, i) => {
      if (typeof item === 'string' && (STATEMENT_PRIVILEGES as readonly string[]).includes(item)) set.add(item as StatementPrivilege);
      else issues.add([...path, i], `unknown privilege ${quoteValue(String(item))}; valid: ${STATEMENT_PRIVILEGES.join(', ')}`);
    });
    out.set(role, set);
  }
}

function readColumns(issues: IssueCollector, value: unknown, out: ColumnPolicy[]): void {
  if (value === undefined || value === null) {
    issues.warn(['columns'], 'no column policies: the proxy passes every column through unchanged');
    return;
  }
  if (!isMapping(value)) {
    issues.add(['columns'], 'must be a mapping of schema.table.column to its policy, e.g. public.customers.ssn: { kind: ssn, method: fpe }');
    return;
  }
  const seen = new Map<string, string>();
  for (const [key, entry] of Object.entries(value)) {
    const path = ['columns', key];
    const parsed = parseColumnName(key);
    if (!parsed.ok) {
      issues.add(path, `malformed column name: ${parsed.reason}. Write schema.table.column (public.customers.ssn); `
        + 'double-quote names with capitals, dots or spaces: public."Customers"."SSN"', { atKey: true });
      readColumnEntry(issues, entry, path); // its own mistakes are worth reporting too
      continue;
    }
    const canonical = formatColumnName(parsed.name);
    const earlier = seen.get(canonical);
    if (earlier !== undefined) {
      const at = issues.locate(['columns', earlier], true).line;
      issues.add(path, `names the same column as ${JSON.stringify(earlier)}${at === undefined ? '' : ` (line ${at})`}: `
        + 'unquoted names fold to lower case, as in PostgreSQL', { atKey: true });
      continue;
    }
    seen.set(canonical, key);
    const checked = readColumnEntry(issues, entry, path);
    if (!checked) continue;
    const where = issues.locate(path, true);
    out.push({
      ...parsed.name,
      key,
      ...checked,
      source: { file: issues.file, line: where.line ?? 1, column: where.column ?? 1 },
    });
  }
}

/** Parses and checks policy text; throws PolicyError listing every error. */
export function parsePolicies(text: string, file: string): PolicySet {
  const result = readPolicyText(text, file);
  if (errorsOf(result.issues).length > 0) throw new PolicyError(result.issues);
  return createPolicySet(file, result.columns, warningsOf(result.issues), result.privileges);
}

/** Reads a policy file, with `file` (as given) in every message; `text` is absent when it cannot be read. */
export async function readPolicyFile(file: string): Promise<PolicyReadResult & { text?: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    return { file, columns: [], issues: [{ file, path: '', message: `cannot read the policy file (${code})`, severity: 'error' }], privileges: new Map() };
  }
  return { ...readPolicyText(text, file), text };
}

/** Loads and checks a policy file (static checks only); throws PolicyError. */
export async function loadPolicyFile(file: string): Promise<PolicySet> {
  const result = await readPolicyFile(file);
  if (errorsOf(result.issues).length > 0) throw new PolicyError(result.issues);
  return createPolicySet(file, result.columns, warningsOf(result.issues), result.privileges);
}
