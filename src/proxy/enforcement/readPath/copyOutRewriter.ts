/**
 * `COPY table TO STDOUT` rows of a table with columns this session sees other than as stored:
 * PostgreSQL sends one row per CopyData message; the planned fields of a batch of rows are
 * revealed with one engine call per column, the rest of each row keeps its bytes.
 */
import type { Engine } from '../../../engine/index.js';
import type { CopyOutStream } from '../writePath/copyTargets.js';
import { readCsvField, readTextField, rowContentEnd, splitFields, writeCsvField, writeTextField } from './copyRowFormat.js';
import type { PolicyMetrics } from '../policyMetrics.js';
import { KEEP, revealColumn } from './valueRevealer.js';
import { copyData } from '../../protocol/messageReaders.js';
import { copyDataMessage } from '../../protocol/messages.js';
import { fromIsoDate, toIsoDate, type DateStyle } from '../valueCodecs/dateStyle.js';
import { TYPE_OIDS } from '../valueCodecs/valueCodecs.js';
import { unsupportedRefusal } from '../policyRefusal.js';

/** A batch of COPY TO data rewritten, and how many rows it holds (what the audit line counts). */
export interface RewrittenCopy {
  readonly frames: Buffer[];
  readonly rows: number;
}

export class CopyOutRewriter {
  private headerPending: boolean;

  constructor(
    private readonly stream: CopyOutStream, private readonly engine: Engine, private readonly metrics: PolicyMetrics, private readonly dateStyle: DateStyle,
  ) {
    this.headerPending = stream.options?.header !== false && stream.options?.header !== undefined;
  }

  get columns(): CopyOutStream['columns'] {
    return this.stream.columns;
  }

  /** Rewrites CopyData frames (one row each, but a header line); other frames are returned as they are. */
  async rewrite(frames: readonly Buffer[]): Promise<RewrittenCopy> {
    const options = this.stream.options;
    if (options === undefined) return { frames: [...frames], rows: 0 };
    const rows: { frame: Buffer; content: Buffer; fields: ReturnType<typeof splitFields> }[] = [];
    const replacements: Map<number, string>[] = [];
    frames.forEach((frame) => {
      const body = copyData(frame);
      const content = body.subarray(0, rowContentEnd(body, 0, body.length));
      if (this.headerPending) {
        this.headerPending = false;
        rows.push({ frame, content, fields: [] });
        replacements.push(new Map());
        return;
      }
      const fields = splitFields(content, options);
      // Fields are planned by position: a row of another width (a table's generated columns are
      // left out of COPY without a column list) would reveal or mask the wrong columns.
      if (fields.length !== this.stream.columnCount) {
        throw unsupportedRefusal(`pgveil refused the COPY: a row has ${fields.length} fields where pgveil expected ${this.stream.columnCount} columns (a table with generated columns); list the columns: COPY table (columns) TO STDOUT`);
      }
      rows.push({ frame, content, fields });
      replacements.push(new Map());
    });
    for (const column of this.stream.columns) {
      const positions: number[] = [];
      const stored: string[] = [];
      rows.forEach((row, rowIndex) => {
        const field = row.fields[column.index];
        if (field === undefined) return;
        const raw = row.content.subarray(field.start, field.end);
        const value = options.format === 'csv' ? readCsvField(raw, field, options, false, false) : readTextField(raw, options);
        if (value === null) return;
        positions.push(rowIndex);
        stored.push(column.typeOid === TYPE_OIDS.date ? toIsoDate(value, this.dateStyle) ?? value : value);
      });
      if (stored.length === 0) continue;
      const revealed = await revealColumn(this.engine, column.policy, column.action, stored, this.metrics);
      revealed.forEach((revealedValue, i) => {
        if (revealedValue === KEEP) return;
        const value = revealedValue !== null && column.typeOid === TYPE_OIDS.date ? fromIsoDate(revealedValue, this.dateStyle) : revealedValue;
        const text = value === null
          ? options.null
          : options.format === 'csv' ? writeCsvField(value, options, false) : writeTextField(value, options);
        (replacements[positions[i] as number] as Map<number, string>).set(column.index, text);
      });
    }
    const out = rows.map((row, rowIndex) => {
      const changes = replacements[rowIndex] as Map<number, string>;
      if (changes.size === 0) return row.frame;
      const body = copyData(row.frame);
      const parts: Buffer[] = [];
      let cursor = 0;
      row.fields.forEach((field, index) => {
        const change = changes.get(index);
        if (change === undefined) return;
        parts.push(body.subarray(cursor, field.start), Buffer.from(change, 'utf8'));
        cursor = field.end;
      });
      parts.push(body.subarray(cursor));
      return copyDataMessage(Buffer.concat(parts));
    });
    // The header line (fields: none) is no row.
    return { frames: out, rows: rows.filter((row) => row.fields.length > 0).length };
  }
}
