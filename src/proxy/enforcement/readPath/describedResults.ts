/**
 * Which result sets have a plan: a RowDescription is read once while its bytes repeat, a plan is
 * derived once per description, policies and result formats, and the catalog is brought to know
 * every table a description names before its rows are planned.
 */
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import type { PortalInfo } from '../expectedReplies.js';
import type { MessageVerdict } from '../../session/sessionHooks.js';
import type { PolicySessionState } from '../policySessionState.js';
import { readRowDescription, type FieldDescription } from '../../protocol/messageReaders.js';
import { namesTableColumns, planResult, type ResultPlan } from './resultPlan.js';

const FIRST_NORMAL_OID = 16384;

/** A plan derived from a description under some policies and result formats. */
interface KnownPlan {
  readonly policies: ColumnPolicies;
  readonly formats: readonly number[] | undefined;
  readonly plan: ResultPlan | undefined;
}

function sameFormats(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Longer descriptions are compared natively: below this, Buffer.equals's call into C++ costs more than the loop. */
const LOOP_COMPARE_BYTES = 256;

/** Whether chunk[start..end) holds the same bytes as `last`. */
function sameDescription(last: Buffer, chunk: Buffer, start: number, end: number): boolean {
  const length = last.length;
  if (length !== end - start) return false;
  if (length > LOOP_COMPARE_BYTES) return last.compare(chunk, start, end) === 0;
  for (let i = 0; i < length; i++) if (last[i] !== chunk[start + i]) return false;
  return true;
}

export class DescribedResults {
  /** The last RowDescription read, as bytes and fields: a statement run again is described alike. */
  private lastDescription: Buffer | undefined;
  private lastFields: readonly FieldDescription[] = [];
  /** Plans per description (the same fields object while its RowDescription repeats). */
  private readonly plans = new WeakMap<readonly FieldDescription[], KnownPlan>();
  /** What each plan was derived from. */
  private readonly sources = new WeakMap<ResultPlan, { readonly fields: readonly FieldDescription[]; readonly formats: readonly number[] | undefined }>();
  /** The last fields whose every table the catalog knew, and the policies it knew them under. */
  private knownFields: readonly FieldDescription[] | undefined;
  private knownUnder: ColumnPolicies | undefined;

  constructor(private readonly state: PolicySessionState) {}

  /** The fields of a RowDescription; the same object as last time when the bytes repeat. */
  fieldsOf(frame: Buffer): readonly FieldDescription[] {
    const known = this.knownFieldsAt(frame, 0, frame.length);
    if (known !== undefined) return known;
    const fields = readRowDescription(frame);
    this.lastDescription = Buffer.from(frame);
    this.lastFields = fields;
    return fields;
  }

  /** The fields of the RowDescription at chunk[start..end) when it repeats the last one read (else undefined: read it whole). */
  knownFieldsAt(chunk: Buffer, start: number, end: number): readonly FieldDescription[] | undefined {
    return this.lastDescription !== undefined && sameDescription(this.lastDescription, chunk, start, end) ? this.lastFields : undefined;
  }

  /**
   * The plan of a portal's rows (null: none) from what describes it, derived once per portal and
   * policies: rows that arrive after a reload or a catalog refresh are planned under the new ones.
   */
  portalPlan(portal: PortalInfo | undefined): ResultPlan | undefined {
    if (portal === undefined) return undefined;
    const policies = this.state.policiesNow();
    const known = portal.readPlan;
    if (known !== undefined && policies !== undefined && portal.readPlanUnder === policies) return known ?? undefined;
    let plan: ResultPlan | undefined;
    if (policies !== undefined) {
      if (portal.described) plan = this.plan(policies, portal.described);
      // Every Execute is preceded by a Describe of its portal (frontendPolicy.execute); the statement's description is a last resort.
      else if (portal.statement?.fields) plan = this.plan(policies, portal.statement.fields, portal.resultFormats);
    }
    portal.readPlan = plan ?? null;
    portal.readPlanUnder = policies;
    return plan;
  }

  /** The plan of rows with these fields under these policies (and a portal's result formats), derived once per combination. */
  plan(policies: ColumnPolicies, fields: readonly FieldDescription[], formats?: readonly number[]): ResultPlan | undefined {
    const known = this.plans.get(fields);
    if (known !== undefined && known.policies === policies && sameFormats(known.formats, formats)) return known.plan;
    const plan = planResult(fields, (oid, attnum) => policies.policyOf(oid, attnum), this.state.actions, formats);
    this.plans.set(fields, { policies, formats, plan });
    if (plan !== undefined) this.sources.set(plan, { fields, formats });
    return plan;
  }

  /** The plan the rows `plan` was made for get under other policies (a reload since). */
  planAgain(plan: ResultPlan, policies: ColumnPolicies): ResultPlan | undefined {
    const source = this.sources.get(plan);
    // Every plan comes from `plan` above; one of unknown source plans nothing alike.
    return source === undefined ? undefined : this.plan(policies, source.fields, source.formats);
  }

  /**
   * The policies to plan `fields` under now, when the catalog knows every table they name
   * (undefined: they name no table column); CATALOG_READ_FIRST when it must be loaded or
   * refreshed first (a table created since the last load shows up as an unknown OID).
   */
  policiesKnowing(fields: readonly FieldDescription[]): ColumnPolicies | undefined | typeof CATALOG_READ_FIRST {
    if (!namesTableColumns(fields)) return undefined;
    const now = this.state.policiesNow();
    if (now === undefined) return CATALOG_READ_FIRST;
    // A statement described again gives the same fields object: known tables stay known under the same policies.
    if (this.knownFields === fields && this.knownUnder === now) return now;
    const oids = unknownOids(fields, now);
    if (oids.length === 0) {
      this.knownFields = fields;
      this.knownUnder = now;
      return now;
    }
    return oids.every((key) => this.state.catalog.recentlyConfirmedMissing(key)) ? now : CATALOG_READ_FIRST;
  }

  /** Runs `then` once the catalog was read and knows the tables the fields name (or confirmed them missing). */
  async afterCatalogRead(fields: readonly FieldDescription[], then: (policies: ColumnPolicies) => MessageVerdict): Promise<MessageVerdict> {
    const catalog = this.state.catalog;
    const unknown = (policies: ColumnPolicies): string[] => unknownOids(fields, policies).filter((key) => !catalog.recentlyConfirmedMissing(key));
    let policies = await this.state.policies();
    const missing = unknown(policies);
    if (missing.length > 0) {
      await catalog.afterMiss();
      policies = await this.state.policies();
      catalog.confirmMissing(unknown(policies));
    }
    // Plans are kept per policies object: one derived under the old catalog is not reused.
    return then(policies);
  }
}

/** The tables the fields name that the catalog behind `policies` does not know. OIDs below 16384 are the system's own: never user tables. */
function unknownOids(fields: readonly FieldDescription[], policies: ColumnPolicies): string[] {
  return fields
    .filter((field) => field.tableOid >= FIRST_NORMAL_OID && !policies.snapshot.relations.has(field.tableOid))
    .map((field) => `oid:${field.tableOid}`);
}

/** policiesKnowing's answer when the catalog must be read first. */
export const CATALOG_READ_FIRST: unique symbol = Symbol('catalog read first');
