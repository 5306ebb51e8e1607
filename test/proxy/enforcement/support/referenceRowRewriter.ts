/**
 * The read path's DataRow rewriting written plainly (a field array per row, a buffer per value,
 * a message per changed row): the reference the batched rowRewriter must match byte for byte.
 */
import type { Engine } from '../../../../src/engine/index.js';
import type { PolicyMetrics } from '../../../../src/proxy/enforcement/policyMetrics.js';
import type { PlannedField, ResultPlan } from '../../../../src/proxy/enforcement/readPath/resultPlan.js';
import { decodeBinary, encodeBinary, TYPE_OIDS } from '../../../../src/proxy/enforcement/valueCodecs/valueCodecs.js';
import { KEEP, revealColumn } from '../../../../src/proxy/enforcement/readPath/valueRevealer.js';
import { fromIsoDate, toIsoDate, type DateStyle } from '../../../../src/proxy/enforcement/valueCodecs/dateStyle.js';
import { dataRowFields } from '../../../../src/proxy/protocol/messageReaders.js';
import { dataRowMessage } from '../../../../src/proxy/protocol/messages.js';

/** Hides the plaintext unless the action shows stored values as they are. */
function fallbackFor(field: PlannedField): null | typeof KEEP {
  return field.action === 'unprotect' ? KEEP : null;
}

/** bpchar pads with spaces: the engine sees the value without them, the client gets the width back. */
function isPadded(field: PlannedField): boolean {
  return field.typeOid === TYPE_OIDS.bpchar;
}

/** Text-format dates go to the engine as ISO and back in the session's DateStyle. */
function isTextDate(field: PlannedField): boolean {
  return field.typeOid === TYPE_OIDS.date && field.format === 0;
}

export async function rewriteDataRowsPlainly(
  rows: readonly Buffer[], plan: ResultPlan, engine: Engine, metrics: PolicyMetrics, dateStyle: DateStyle,
): Promise<Buffer[]> {
  const ranges = rows.map((row) => dataRowFields(row));
  const replacements: (Buffer | null | undefined)[][] = rows.map(() => new Array<Buffer | null | undefined>(plan.fieldCount));
  for (const field of plan.fields) {
    const positions: number[] = [];
    const stored: string[] = [];
    const widths: number[] = [];
    ranges.forEach((fields, rowIndex) => {
      const range = fields[field.index];
      if (range === null || range === undefined) return; // NULL stays NULL
      const bytes = (rows[rowIndex] as Buffer).subarray(range[0], range[1]);
      let text: string | undefined = field.format === 1 ? decodeBinary(field.typeOid, bytes) : bytes.toString('utf8');
      if (text === undefined) {
        metrics.undecodableValues++;
        const fallback = fallbackFor(field);
        if (fallback === null) (replacements[rowIndex] as (Buffer | null | undefined)[])[field.index] = null;
        return;
      }
      if (isPadded(field)) {
        widths.push([...text].length);
        text = text.replace(/ +$/, '');
      }
      if (isTextDate(field)) text = toIsoDate(text, dateStyle) ?? text;
      positions.push(rowIndex);
      stored.push(text);
    });
    if (stored.length === 0) continue;
    const revealed = await revealColumn(engine, field.policy, field.action, stored, metrics);
    revealed.forEach((value, i) => {
      const rowIndex = positions[i] as number;
      const row = replacements[rowIndex] as (Buffer | null | undefined)[];
      if (value === KEEP) return;
      if (value === null) {
        row[field.index] = null;
        return;
      }
      let text = value;
      if (isPadded(field)) text = text.padEnd(widths[i] ?? 0, ' ');
      if (isTextDate(field)) text = fromIsoDate(text, dateStyle);
      const encoded = field.format === 1 ? encodeBinary(field.typeOid, text) : Buffer.from(text, 'utf8');
      if (encoded === undefined) {
        metrics.undecodableValues++;
        if (fallbackFor(field) === null) row[field.index] = null;
        return;
      }
      row[field.index] = encoded;
    });
  }
  return rows.map((row, rowIndex) => {
    const changes = replacements[rowIndex] as (Buffer | null | undefined)[];
    if (!changes.some((value) => value !== undefined)) return row;
    const fields = ranges[rowIndex] as (readonly [number, number] | null)[];
    return dataRowMessage(fields.map((range, index) => {
      const change = changes[index];
      if (change !== undefined) return change;
      return range === null ? null : row.subarray(range[0], range[1]);
    }));
  });
}
