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

  constructor(private readonly roles: readonly string[]) {}

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
  return fields.some((field) => field.tableOid !== 0 && field.attnum > 0);
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
