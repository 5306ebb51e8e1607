import { parseColumnName, type TableName } from '../../policy/index.js';
import { UsageError } from '../cliIo.js';

/**
 * Reads the `<schema.table>` argument as PostgreSQL (and the policy file) reads names: unquoted
 * names fold to lower case, double-quoted ones are kept exactly (`public."Customers"`). A bare
 * table name means schema `public`.
 */
export function parseTableArgument(arg: string | undefined): TableName {
  if (arg === undefined || arg === '') throw new UsageError('name the table: <schema.table>');
  // The policy key reader knows the quoting rules; a placeholder column makes the name a key.
  const qualified = parseColumnName(`${arg}.x`);
  if (qualified.ok) return { schema: qualified.name.schema, table: qualified.name.table };
  const bare = parseColumnName(`public.${arg}.x`);
  if (bare.ok) return { schema: bare.name.schema, table: bare.name.table };
  // "has 4 names, not 3" counts the placeholder: only the other reasons help here.
  const why = qualified.reason.startsWith('has ') ? '' : `: ${qualified.reason}`;
  throw new UsageError(`not a table name${why}; write it as schema.table (double-quote names with capitals or other characters)`);
}
