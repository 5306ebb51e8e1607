/**
 * `COPY table FROM STDIN` into a table with protected columns: the client's CopyData stream is
 * cut into rows (a row may span CopyData messages; a partial row waits for the rest), the
 * protected fields of the complete rows are protected in one engine call per policy, and the rows
 * go on with only those fields rewritten. A row pgveil cannot read is refused (22P04), never
 * forwarded: PostgreSQL would quote it in its error and its log.
 */
import type { ColumnPolicy } from '../../../policy/index.js';
import type { Engine } from '../../../engine/index.js';
import type { CopyFromTarget, CopyOptions } from '../../sql/index.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import {
  hasBareCarriageReturn, isEndMarker, readCsvField, readTextField, rowContentEnd, RowScanner, splitFields, writeCsvField, writeTextField,
} from '../readPath/copyRowFormat.js';
import { PolicyRefusal, unsupportedRefusal } from '../policyRefusal.js';
import { normaliseText } from './normaliseText.js';
import type { DateStyle } from '../valueCodecs/dateStyle.js';
import { ProtectionBatch } from './valueProtector.js';

const BAD_COPY_FORMAT = '22P04';

interface ProtectedColumn {
  readonly index: number;
  readonly policy: ColumnPolicy;
  readonly typeOid: number;
  readonly forceNull: boolean;
  readonly forceNotNull: boolean;
}

function listed(list: readonly string[] | '*', name: string): boolean {
  return list === '*' || list.includes(name);
}

export class CopyInRewriter {
  private pending: Buffer = Buffer.alloc(0);
  private readonly scanner: RowScanner;
  private readonly options: CopyOptions;
  private readonly columns: ProtectedColumn[] = [];
  private readonly columnCount: number;
  private headerPending: boolean;
  private finished = false;
  private rowNumber = 0;

  constructor(target: CopyFromTarget, policies: ColumnPolicies, private readonly engine: Engine, private readonly dateStyle: DateStyle) {
    this.options = target.options;
    this.scanner = new RowScanner(target.options);
    this.columnCount = target.columns.length;
    this.headerPending = target.options.header !== false;
    const relation = policies.relationOf(target);
    target.columns.forEach((column, index) => {
      if (!column.protected) return;
      const policy = policies.policyOfColumn(column.column);
      if (policy === undefined) throw unsupportedRefusal(`pgveil refused the statement: no policy found for protected column ${column.column.column}`);
      this.columns.push({
        index, policy,
        typeOid: relation?.columns.find((candidate) => candidate.name === column.column.column)?.typeOid ?? 0,
        forceNull: listed(target.options.forceNull, column.column.column),
        forceNotNull: listed(target.options.forceNotNull, column.column.column),
      });
    });
  }

  /** Rewrites the complete rows of the stream so far; a partial row is kept for later. */
  async data(bytes: Buffer): Promise<Buffer> {
    if (this.finished) return bytes;
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    const rows: Buffer[] = [];
    for (;;) {
      const end = this.scanner.nextRowEnd(this.pending);
      if (end < 0) break;
      rows.push(this.pending.subarray(0, end));
      this.pending = this.pending.subarray(end);
    }
    return this.rewriteRows(rows);
  }

  /** The client's CopyDone: the last row may lack its newline. */
  async end(): Promise<Buffer> {
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    return rest.length === 0 || this.finished ? rest : this.rewriteRows([rest]);
  }

  private async rewriteRows(rows: Buffer[]): Promise<Buffer> {
    const out: (Buffer | string)[][] = [];
    const batch = new ProtectionBatch();
    for (const row of rows) {
      if (this.finished) {
        out.push([row]);
        continue;
      }
      this.rowNumber++;
      const contentEnd = rowContentEnd(row, 0, row.length);
      const content = row.subarray(0, contentEnd);
      // The header too: forwarded as it is, it must end where PostgreSQL will end it.
      if (hasBareCarriageReturn(content, this.options)) {
        throw new PolicyRefusal(BAD_COPY_FORMAT, `pgveil refused the COPY: row ${this.rowNumber} holds a carriage return that does not end its line, where PostgreSQL may end a row; end lines with \\n or \\r\\n`);
      }
      if (this.headerPending) {
        this.headerPending = false;
        out.push([row]);
        continue;
      }
      if (isEndMarker(content)) {
        this.finished = true;
        out.push([row]);
        continue;
      }
      const fields = splitFields(content, this.options);
      if (fields.length !== this.columnCount) {
        throw new PolicyRefusal(BAD_COPY_FORMAT, `pgveil refused the COPY: row ${this.rowNumber} has ${fields.length} fields where ${this.columnCount} columns were listed`);
      }
      const parts: (Buffer | string)[] = [];
      let cursor = 0;
      for (const column of this.columns) {
        const field = fields[column.index] as (typeof fields)[number];
        const raw = content.subarray(field.start, field.end);
        const value = this.options.format === 'csv'
          ? readCsvField(raw, field, this.options, column.forceNull, column.forceNotNull)
          : readTextField(raw, this.options);
        if (value === null || (this.options.default !== undefined && raw.toString('utf8') === this.options.default)) continue;
        parts.push(content.subarray(cursor, field.start));
        const slot = parts.length;
        parts.push('');
        cursor = field.end;
        batch.add(column.policy, normaliseText(column.typeOid, value, this.dateStyle), (protectedValue) => {
          parts[slot] = this.options.format === 'csv' ? writeCsvField(protectedValue, this.options) : writeTextField(protectedValue, this.options);
        });
      }
      parts.push(row.subarray(cursor));
      out.push(parts);
    }
    if (batch.size > 0) await batch.run(this.engine);
    return Buffer.concat(out.flat().map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part)));
  }
}
