/** A small fake catalog for the SQL analysis tests: which tables exist and which columns are protected. */
import type { ColumnRef, ProtectedSchema, ResolvedTable } from '../../src/proxy/sql/index.js';

const TABLES: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  public: {
    customers: ['id', 'name', 'ssn', 'email', 'note', 'created'],
    orders: ['id', 'customer_id', 'amount', 'card', 'memo'],
    plain: ['id', 'ssn', 'note'],
    Mixed: ['id', 'Secret'],
  },
  billing: {
    accounts: ['id', 'iban', 'label'],
  },
};

const PROTECTED = new Set([
  'public.customers.ssn', 'public.customers.email', 'public.orders.card', 'billing.accounts.iban', 'public.Mixed.Secret',
]);

export function column(table: string, name: string, schema = 'public'): ColumnRef {
  return { schema, table, column: name };
}

export const SSN = column('customers', 'ssn');
export const EMAIL = column('customers', 'email');
export const CARD = column('orders', 'card');
export const IBAN = column('accounts', 'iban', 'billing');

export interface TestSchemaOptions {
  /** Offer protectedTableNames() (the optional fast path for raw-text scans). */
  readonly listNames?: boolean;
}

export function testSchema(options: TestSchemaOptions = {}): ProtectedSchema & { resolveCalls: number } {
  const schema = {
    resolveCalls: 0,
    resolveTable(schemaName: string | undefined, table: string): ResolvedTable | undefined {
      schema.resolveCalls++;
      const name = schemaName ?? 'public';
      const columns = TABLES[name]?.[table];
      return columns === undefined ? undefined : { schema: name, table, columns };
    },
    isProtected(ref: ColumnRef): boolean {
      return PROTECTED.has(`${ref.schema}.${ref.table}.${ref.column}`);
    },
    ...(options.listNames === true ? { protectedTableNames: () => ['customers', 'orders', 'accounts', 'Mixed'] } : {}),
  };
  return schema;
}
