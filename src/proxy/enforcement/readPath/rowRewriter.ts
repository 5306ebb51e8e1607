/**
 * Rewrites a batch of DataRows of one result set: only the planned fields change, each with one
 * engine call for the whole batch (the columns' calls issued together, so they share a loop
 * turn). Text values are UTF-8; binary ones go through the type's codec. The batch comes back as
 * one buffer. Nothing here fails mid-stream: what cannot be revealed goes out as stored (or NULL
 * for a mask view, whose role may not see what is stored).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Engine, UnprotectInPlace } from '../../../engine/index.js';
import type { ColumnPolicy } from '../../../policy/index.js';
import type { PolicyMetrics } from '../policyMetrics.js';
import type { PlannedField, ResultPlan } from './resultPlan.js';
import { decodeBinary, encodeBinary, TYPE_OIDS } from '../valueCodecs/valueCodecs.js';
import { KEEP, revealColumn } from './valueRevealer.js';
import { fromIsoDate, toIsoDate, type DateStyle } from '../valueCodecs/dateStyle.js';
import { ABSENT, DataRowBatch } from './dataRowBatch.js';

/** Hides the plaintext unless the action shows stored values as they are. */
function fallbackFor(field: PlannedField): null | typeof KEEP {
  return field.action === 'unprotect' ? KEEP : null;
}

/** bpchar pads with spaces: the engine sees the value without them, the client gets the width back. */
function isPadded(field: PlannedField): boolean {
  return field.typeOid === TYPE_OIDS.bpchar;
}

/** A loop, not `/ +$/`: that regex is quadratic on spaces followed by another character. */
export function withoutTrailingSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** Text-format dates go to the engine as ISO and back in the session's DateStyle. */
function isTextDate(field: PlannedField): boolean {
  return field.typeOid === TYPE_OIDS.date && field.format === 0;
}

const fieldIndexesOf = new WeakMap<ResultPlan, number[]>();

/** The plan's field indexes, ascending (planResult lists them in order), once per plan. */
function fieldIndexes(plan: ResultPlan): number[] {
  let indexes = fieldIndexesOf.get(plan);
  if (indexes === undefined) {
    indexes = plan.fields.map((field) => field.index);
    fieldIndexesOf.set(plan, indexes);
  }
  return indexes;
}

/** A column's unprotect in place over bytes (ValueProtection.unprotectInPlace), where its policy has one. */
export type InPlaceUnprotection = (policy: ColumnPolicy) => UnprotectInPlace | undefined;

/**
 * `frames`: whole DataRows, one or more back to back in each. `inPlace`: where a column's plain
 * unprotect of text can rewrite the fields' bytes where they lie (fpe of ssn, ccn, ISO dates), it
 * does, with no string per value; what it leaves goes the string way below. The frames' own
 * memory is written: they are this batch's alone. `rows`: how many DataRows the frames hold,
 * where the caller has counted them.
 */
export async function rewriteDataRows(
  frames: readonly Buffer[], plan: ResultPlan, engine: Engine, metrics: PolicyMetrics, dateStyle: DateStyle, inPlace?: InPlaceUnprotection, rows?: number,
): Promise<Buffer> {
  const batch = new DataRowBatch(frames, fieldIndexes(plan), rows);
  const doneInPlace = inPlace === undefined ? [] : await unprotectInPlaceWhereAble(batch, plan, inPlace, dateStyle, metrics);
  const rest: Promise<void>[] = [];
  plan.fields.forEach((field, slot) => {
    const done = doneInPlace[slot];
    if (done !== EVERY_FIELD) rest.push(rewriteField(batch, slot, field, engine, metrics, dateStyle, done));
  });
  if (rest.length > 0) await Promise.all(rest);
  return batch.write();
}

/** A slot whose every present field was rewritten in place: nothing of it is left for the string way. */
const EVERY_FIELD = new Uint8Array(0);

/**
 * Plain unprotect of text a kind may rewrite byte for byte: not bpchar (its padding is put back
 * by width), and dates only in ISO output (other styles are converted both ways).
 */
function rewritesInPlace(field: PlannedField, dateStyle: DateStyle): boolean {
  return field.action === 'unprotect' && field.format === 0 && !isPadded(field) && (!isTextDate(field) || dateStyle.output === 'ISO');
}

/** Values unprotected in place per loop turn, all columns together: a long batch lets the loop turn between runs. */
const IN_PLACE_PER_TURN = 512;

/**
 * Per planned slot, the rows whose field was unprotected in place (1), for the slots that can
 * be; EVERY_FIELD where that is all of the slot's present fields.
 */
async function unprotectInPlaceWhereAble(
  batch: DataRowBatch, plan: ResultPlan, inPlace: InPlaceUnprotection, dateStyle: DateStyle, metrics: PolicyMetrics,
): Promise<(Uint8Array | undefined)[]> {
  const doneRows: (Uint8Array | undefined)[] = [];
  let thisTurn = 0;
  for (let slot = 0; slot < plan.fields.length; slot++) {
    const field = plan.fields[slot] as PlannedField;
    const unprotect = rewritesInPlace(field, dateStyle) ? inPlace(field.policy) : undefined;
    if (unprotect === undefined) continue;
    const { fields, rowOf, leftOut } = batch.presentFields(slot);
    const handled = new Uint8Array(fields.count);
    for (let from = 0; from < fields.count;) {
      if (thisTurn >= IN_PLACE_PER_TURN) {
        await nextTurn();
        thisTurn = 0;
      }
      const to = Math.min(fields.count, from + IN_PLACE_PER_TURN - thisTurn);
      const slice = from === 0 && to === fields.count ? fields : {
        count: to - from, buffers: fields.buffers.slice(from, to), starts: fields.starts.subarray(from, to), lengths: fields.lengths.subarray(from, to),
      };
      unprotect(slice, handled.subarray(from, to));
      thisTurn += to - from;
      from = to;
    }
    let count = 0;
    for (let k = 0; k < fields.count; k++) count += handled[k] as number;
    metrics.valuesRevealed += count;
    if (count === fields.count && leftOut === 0) {
      doneRows[slot] = EVERY_FIELD;
      continue;
    }
    const done = new Uint8Array(batch.rowCount);
    for (let k = 0; k < fields.count; k++) {
      if (handled[k] === 1) done[rowOf[k] as number] = 1;
    }
    doneRows[slot] = done;
  }
  return doneRows;
}

async function rewriteField(
  batch: DataRowBatch, slot: number, field: PlannedField, engine: Engine, metrics: PolicyMetrics, dateStyle: DateStyle,
  doneRows: Uint8Array | undefined,
): Promise<void> {
  const count = batch.rowCount;
  const positions = new Int32Array(count);
  const stored: string[] = [];
  const padded = isPadded(field);
  const textDate = isTextDate(field);
  const binary = field.format === 1;
  const widths: number[] = [];
  for (let row = 0; row < count; row++) {
    if (batch.length(row, slot) === ABSENT) continue; // NULL stays NULL
    if (doneRows?.[row] === 1) continue; // unprotected in place
    let text: string | undefined = binary ? decodeBinary(field.typeOid, batch.bytes(row, slot)) : batch.text(row, slot);
    if (text === undefined) {
      metrics.undecodableValues++;
      if (fallbackFor(field) === null) batch.change(row, slot, null);
      continue;
    }
    if (padded) {
      widths.push([...text].length);
      text = withoutTrailingSpaces(text);
    }
    if (textDate) text = toIsoDate(text, dateStyle) ?? text;
    positions[stored.length] = row;
    stored.push(text);
  }
  if (stored.length === 0) return;
  const revealed = await revealColumn(engine, field.policy, field.action, stored, metrics);
  // A short answer must not leave a stored value where a mask or NULL was due: fail closed.
  if (revealed.length !== stored.length) throw new Error('the engine answered a different number of values than it was given');
  // ISO output prints the engine's ISO date as it is.
  const restyle = textDate && dateStyle.output !== 'ISO';
  for (let i = 0; i < revealed.length; i++) {
    const value = revealed[i];
    if (value === KEEP) continue;
    if (value === undefined) throw new Error('the engine answered no value for a row');
    const row = positions[i] as number;
    if (value === null) {
      batch.change(row, slot, null);
      continue;
    }
    let text = value;
    if (padded) text = text.padEnd(widths[i] ?? 0, ' ');
    if (restyle) text = fromIsoDate(text, dateStyle);
    if (!binary) {
      batch.change(row, slot, text);
      continue;
    }
    const encoded = encodeBinary(field.typeOid, text);
    if (encoded === undefined) {
      metrics.undecodableValues++;
      if (fallbackFor(field) === null) batch.change(row, slot, null);
      continue;
    }
    batch.change(row, slot, encoded);
  }
}
