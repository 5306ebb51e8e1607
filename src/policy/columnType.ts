/**
 * A column's type as the storage rules see it: a family, and for varchar(n)/char(n) the length
 * n in characters. Domains are resolved to their base type first (catalogReader.ts).
 */
export type TypeFamily =
  | 'text' | 'varchar' | 'char'
  | 'date' | 'uuid' | 'inet' | 'cidr'
  | 'numeric' | 'integer' | 'float'
  | 'array' | 'other';

export interface ColumnType {
  /** As format_type prints it: `character varying(8)`, `uuid`, or the domain's name. */
  readonly display: string;
  readonly family: TypeFamily;
  /** varchar(n) / char(n): n. Absent when unlimited. */
  readonly maxLength?: number;
}

/** The families that hold any text: tokens, masks and redactions of every kind. */
export const TEXT_FAMILIES: ReadonlySet<TypeFamily> = new Set(['text', 'varchar', 'char']);

/** varlena typmods carry the length plus the 4-byte header (VARHDRSZ). */
const VARHDRSZ = 4;

const BY_BASE_TYPE: Readonly<Record<string, TypeFamily>> = {
  text: 'text', citext: 'text', varchar: 'varchar', bpchar: 'char', name: 'varchar',
  date: 'date', uuid: 'uuid', inet: 'inet', cidr: 'cidr', numeric: 'numeric',
  int2: 'integer', int4: 'integer', int8: 'integer', float4: 'float', float8: 'float',
};

/** PostgreSQL's name type holds 63 bytes; counted as characters, which is generous only for non-ASCII. */
const NAME_LENGTH = 63;

/**
 * `baseType` is the pg_type.typname of the (domain-resolved) base type, `typmod` the effective
 * type modifier, `category` its pg_type.typcategory ('A' for arrays).
 */
export function classifyColumnType(display: string, baseType: string, typmod: number, category: string): ColumnType {
  if (category === 'A') return { display, family: 'array' };
  const family = BY_BASE_TYPE[baseType] ?? 'other';
  if (baseType === 'name') return { display, family, maxLength: NAME_LENGTH };
  if ((family === 'varchar' || family === 'char') && typmod > VARHDRSZ) {
    return { display, family, maxLength: typmod - VARHDRSZ };
  }
  return { display, family };
}

export function isTextFamily(type: ColumnType): boolean {
  return TEXT_FAMILIES.has(type.family);
}
