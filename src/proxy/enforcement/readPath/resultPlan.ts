/**
 * What to do with each column of a result set, decided from its RowDescription: the table OID and
 * attribute number of a field name its source column (aliases, joins and `SELECT *` included), the
 * column's policy and the session's roles give the read action. No field to change → no plan, and
 * the rows go on as raw bytes.
 */
import { readActionFor, type ColumnPolicy, type ReadAction } from '../../../policy/index.js';
import type { FieldDescription } from '../../protocol/messageReaders.js';
import { formatAt } from '../../protocol/messageReaders.js';

export interface PlannedField {
  readonly index: number;
  readonly policy: ColumnPolicy;
  readonly action: Exclude<ReadAction, 'pass'>;
  /** 0 text, 1 binary. */
  readonly format: number;
  readonly typeOid: number;
  readonly typmod: number;
}

export interface ResultPlan {
  readonly fieldCount: number;
  readonly fields: readonly PlannedField[];
}

export type PolicyOfAttribute = (tableOid: number, attnum: number) => ColumnPolicy | undefined;

/** Memoises the read action of each policy for one session's roles. */
export class ReadActions {
  private readonly actions = new Map<ColumnPolicy, ReadAction>();

  constructor(readonly roles: readonly string[]) {}

  of(policy: ColumnPolicy): ReadAction {
    let action = this.actions.get(policy);
    if (action === undefined) {
      action = readActionFor(policy, this.roles);
      this.actions.set(policy, action);
    }
    return action;
  }
}

/** True when the description names a column of some table (the catalog may need a look). */
export function namesTableColumns(fields: readonly FieldDescription[]): boolean {
  for (const field of fields) if (field.tableOid !== 0 && field.attnum > 0) return true;
  return false;
}

/**
 * `formats` overrides the fields' own format codes (a statement's description has zeros there;
 * the Bind's result formats decide).
 */
export function planResult(
  fields: readonly FieldDescription[], policyOf: PolicyOfAttribute, actions: ReadActions, formats?: readonly number[],
): ResultPlan | undefined {
  const planned: PlannedField[] = [];
  fields.forEach((field, index) => {
    if (field.tableOid === 0 || field.attnum <= 0) return;
    const policy = policyOf(field.tableOid, field.attnum);
    if (policy === undefined) return;
    const action = actions.of(policy);
    if (action === 'pass') return;
    planned.push({
      index, policy, action,
      format: formats === undefined ? field.format : formatAt(formats, index),
      typeOid: field.typeOid, typmod: field.typmod,
    });
  });
  return planned.length === 0 ? undefined : { fieldCount: fields.length, fields: planned };
}

/** Whether two policies of a column do the same (a reload builds new, equal policies for what it left alone). */
export function sameColumnPolicy(a: ColumnPolicy, b: ColumnPolicy): boolean {
  // Its reveal map is a read-only view: compared by its entries, in order. Where it was written is no part of what it does.
  return a === b || samePlainData({ ...a, reveal: [...a.reveal], source: undefined }, { ...b, reveal: [...b.reveal], source: undefined });
}

/**
 * Deep equality of plain data: primitives, arrays, plain objects (a key set to undefined counts as
 * absent) and Maps (entry by entry, in order). Anything else — a Set, a typed array, a class
 * instance, a function — is equal only to itself: a policy field of a new kind makes two plans
 * differ, which ends what they gate, rather than compare equal unread.
 */
function samePlainData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => samePlainData(item, b[i]));
  }
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map) || !(b instanceof Map) || a.size !== b.size) return false;
    const others = b.entries();
    for (const [key, value] of a) {
      const [otherKey, otherValue] = others.next().value as [unknown, unknown];
      if (key !== otherKey || !samePlainData(value, otherValue)) return false;
    }
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = definedKeys(a);
  const otherKeys = definedKeys(b);
  return keys.length === otherKeys.length && keys.every((key) => Object.hasOwn(b, key) && samePlainData(a[key], b[key]));
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && Object.getOwnPropertySymbols(value).length === 0;
}

function definedKeys(value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((key) => value[key] !== undefined);
}

/** Whether two plans of one result do the same to each field. */
export function samePlan(a: ResultPlan | undefined, b: ResultPlan | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.fieldCount !== b.fieldCount || a.fields.length !== b.fields.length) return false;
  return a.fields.every((field, i) => {
    const other = b.fields[i] as PlannedField;
    return field.index === other.index && field.action === other.action && field.format === other.format
      && field.typeOid === other.typeOid && field.typmod === other.typmod && sameColumnPolicy(field.policy, other.policy);
  });
}

type RevealingFields = readonly { readonly policy: { readonly key: string }; readonly action: string }[];

/** The policy keys of the columns a plan decrypts to plaintext (masks and tokens reveal nothing), once per plan. */
const plaintextColumnsOf = new WeakMap<RevealingFields, string[]>();
export function plaintextColumns(fields: RevealingFields): string[] {
  let columns = plaintextColumnsOf.get(fields);
  if (columns === undefined) {
    columns = fields.filter((field) => field.action === 'unprotect').map((field) => field.policy.key);
    plaintextColumnsOf.set(fields, columns);
  }
  return columns;
}
