/**
 * Objects made on the database directly that pgveil cannot see inside: triggers, rules and
 * row-level security policies on protected tables, views over them, and functions whose body
 * names a protected table or runs dynamic SQL. Through pgveil such code needs the `code`
 * privilege; made directly on the database, it is the DBA's responsibility, and `pgveil policy
 * check` lists it so that someone looks.
 */
import type { CatalogQuery } from './catalogReader.js';
import type { PolicySet } from './policyTypes.js';

export interface CodeFinding {
  readonly kind: 'trigger' | 'rule' | 'policy' | 'view' | 'function';
  /** The object, schema-qualified (a trigger, rule or policy with its table). */
  readonly name: string;
  readonly why: string;
}

const DYNAMIC_SQL = /\bexecute\b|\b(query|table|schema|database|cursor)_to_xml|\bdblink/i;

export async function findCodeOnProtectedTables(query: CatalogQuery, set: PolicySet): Promise<CodeFinding[]> {
  const tables = set.tables();
  if (tables.length === 0) return [];
  const schemas = tables.map((t) => t.schema);
  const names = tables.map((t) => t.table);
  const protectedTables = `
    SELECT c.oid, format('%I.%I', n.nspname, c.relname) AS tbl
    FROM unnest($1::text[], $2::text[]) AS t(s, r)
    JOIN pg_namespace n ON n.nspname = t.s JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.r`;
  const rows = await query(`
    WITH protected AS (${protectedTables})
    SELECT 'trigger' AS kind, format('%s on %s', quote_ident(t.tgname), p.tbl) AS name,
      format('runs %s for every change of the table', t.tgfoid::regproc) AS why
    FROM pg_trigger t JOIN protected p ON p.oid = t.tgrelid WHERE NOT t.tgisinternal
    UNION ALL
    SELECT 'rule', format('%s on %s', quote_ident(r.rulename), p.tbl), 'rewrites statements on the table'
    FROM pg_rewrite r JOIN protected p ON p.oid = r.ev_class WHERE r.rulename <> '_RETURN'
    UNION ALL
    SELECT 'policy', format('%s on %s', quote_ident(pol.polname), p.tbl), 'a row-level security policy with its own expressions'
    FROM pg_policy pol JOIN protected p ON p.oid = pol.polrelid
    UNION ALL
    SELECT DISTINCT 'view', format('%I.%I', vn.nspname, v.relname), format('reads %s', p.tbl)
    FROM pg_depend d JOIN pg_rewrite rw ON rw.oid = d.objid JOIN pg_class v ON v.oid = rw.ev_class
    JOIN pg_namespace vn ON vn.oid = v.relnamespace JOIN protected p ON p.oid = d.refobjid
    WHERE d.classid = 'pg_rewrite'::regclass AND v.oid <> d.refobjid`, [schemas, names]);
  const findings: CodeFinding[] = rows.map((row) => ({ kind: row['kind'] as CodeFinding['kind'], name: String(row['name']), why: String(row['why']) }));
  const functions = await query(`
    SELECT p.oid::regprocedure::text AS name, l.lanname AS language, p.prosrc AS body
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND l.lanname NOT IN ('internal', 'c')
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`, []);
  const tableWords = names.map((name) => new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i'));
  for (const fn of functions) {
    const body = String(fn['body'] ?? '');
    const language = String(fn['language']);
    const named = names.filter((_, i) => tableWords[i]?.test(body));
    const reasons = [
      ...(named.length > 0 ? [`its body names ${[...new Set(named)].join(', ')}`] : []),
      ...(DYNAMIC_SQL.test(body) ? ['it runs dynamic SQL'] : []),
      ...(language !== 'sql' && language !== 'plpgsql' ? [`it is in ${language}, which pgveil does not read`] : []),
    ];
    if (reasons.length > 0) findings.push({ kind: 'function', name: String(fn['name']), why: reasons.join('; ') });
  }
  return findings;
}

export function renderCodeFindings(findings: readonly CodeFinding[]): string {
  if (findings.length === 0) return 'No triggers, rules, row-level security policies, views or functions on or over protected tables.';
  return [
    'Code on or over protected tables, made on the database directly — pgveil cannot see inside it, so it',
    'is the DBA\'s responsibility (through pgveil, such code needs the `code` privilege):',
    ...findings.map((finding) => `  ${finding.kind} ${finding.name}: ${finding.why}`),
  ].join('\n');
}
