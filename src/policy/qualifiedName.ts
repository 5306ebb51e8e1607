/**
 * `schema.table.column` keys, read as PostgreSQL reads identifiers: an unquoted name folds to
 * lower case (`Public.Customers.SSN` is `public.customers.ssn`), a double-quoted one is kept
 * exactly (`public."Customers"."SSN"`, `""` for a quote inside). So a column created as
 * `CREATE TABLE "Customers" ("SSN" text)` is written with the same quotes as in SQL; in YAML the
 * whole key then needs single quotes: `'public."Customers"."SSN"':`.
 */

/** PostgreSQL's NAMEDATALEN - 1: longer names are truncated by the server, so never match. */
export const MAX_IDENTIFIER_BYTES = 63;

export interface ColumnName {
  readonly schema: string;
  readonly table: string;
  readonly column: string;
}

export type ParsedColumnName = { ok: true; name: ColumnName } | { ok: false; reason: string };

const UNQUOTED_START = /[\p{L}_]/u;
const UNQUOTED_PART = /[\p{L}\p{N}_$]/u;

/** PostgreSQL folds ASCII letters only (in UTF-8 databases). */
function foldUnquoted(name: string): string {
  return name.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/** Splits the key into identifiers; undefined reason means success. */
function splitIdentifiers(key: string): { parts: string[]; reason?: string } {
  const parts: string[] = [];
  let i = 0;
  for (;;) {
    let name = '';
    if (key[i] === '"') {
      i++;
      for (;;) {
        if (i >= key.length) return { parts, reason: 'a double quote is not closed' };
        if (key[i] === '"') {
          if (key[i + 1] === '"') { name += '"'; i += 2; continue; }
          i++;
          break;
        }
        name += key[i];
        i++;
      }
      if (name === '') return { parts, reason: 'a quoted name is empty' };
    } else {
      const start = i;
      const first = key.codePointAt(i);
      if (first === undefined || !UNQUOTED_START.test(String.fromCodePoint(first))) {
        return { parts, reason: i >= key.length || key[i] === '.' ? 'a name is empty' : 'an unquoted name must start with a letter or _ (quote other names)' };
      }
      while (i < key.length && key[i] !== '.') {
        const cp = key.codePointAt(i) as number;
        const ch = String.fromCodePoint(cp);
        if (!UNQUOTED_PART.test(ch)) return { parts, reason: `"${ch}" is not allowed in an unquoted name (quote the name)` };
        i += ch.length;
      }
      name = foldUnquoted(key.slice(start, i));
    }
    if (Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES) {
      return { parts, reason: `a name is longer than ${MAX_IDENTIFIER_BYTES} bytes (PostgreSQL truncates such names)` };
    }
    parts.push(name);
    if (i >= key.length) return { parts };
    if (key[i] !== '.') return { parts, reason: 'names must be separated by "."' };
    i++;
  }
}

export function parseColumnName(key: string): ParsedColumnName {
  const { parts, reason } = splitIdentifiers(key);
  if (reason !== undefined) return { ok: false, reason };
  if (parts.length !== 3) {
    return { ok: false, reason: `has ${parts.length} name${parts.length === 1 ? '' : 's'}, not 3` };
  }
  const [schema, table, column] = parts as [string, string, string];
  return { ok: true, name: { schema, table, column } };
}

/** A name as it is written in the policy file: bare when it reads back the same, else quoted. */
export function quoteIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

export function formatColumnName(name: ColumnName): string {
  return [name.schema, name.table, name.column].map(quoteIdentifier).join('.');
}

export function formatTableName(schema: string, table: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}
