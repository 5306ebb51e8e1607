/**
 * `COPY table TO STDOUT (FORMAT binary)` of a table with columns this session sees other than as
 * stored: the server's stream is read as it arrives (binaryCopyFormat.ts); each planned field is
 * decoded with its type's binary codec, revealed (one engine call per column for a batch of
 * frames) and encoded again; the rest keeps its bytes. copyTargets.ts refuses the statement when a
 * planned column's type has no codec, or is masked and not text (a mask does not fit a date).
 */
import type { Engine } from '../../../engine/index.js';
import type { CopyOutStream } from '../writePath/copyTargets.js';
import type { PolicyMetrics } from '../policyMetrics.js';
import { KEEP, revealColumn } from './valueRevealer.js';
import { copyData } from '../../protocol/messageReaders.js';
import { copyDataMessage } from '../../protocol/messages.js';
import { decodeBinary, encodeBinary } from '../valueCodecs/valueCodecs.js';
import { BinaryCopyReader, binaryCopyField, type BinaryCopyPiece } from './binaryCopyFormat.js';
import type { RewrittenCopy } from './copyOutRewriter.js';

/** PostgreSQL sends each row in one CopyData message: a held field is never more than its frame. */
const HOLD_LIMIT = 0x7fffffff;

export class BinaryCopyOutRewriter {
  private readonly reader: BinaryCopyReader;
  private readonly planned: ReadonlyMap<number, CopyOutStream['columns'][number]>;

  constructor(private readonly stream: CopyOutStream, private readonly engine: Engine, private readonly metrics: PolicyMetrics) {
    this.planned = new Map(stream.columns.map((column) => [column.index, column]));
    this.reader = new BinaryCopyReader(stream.columnCount, (index) => (this.planned.has(index) ? HOLD_LIMIT : undefined));
  }

  get columns(): CopyOutStream['columns'] {
    return this.stream.columns;
  }

  /** Rewrites a batch of CopyData frames; each frame's bytes stay in a frame of their own. */
  async rewrite(frames: readonly Buffer[]): Promise<RewrittenCopy> {
    const rowsBefore = this.reader.rows;
    const out: Buffer[][] = [];
    const held = new Map<number, { frame: number; slot: number; stored: string }[]>();
    frames.forEach((frame, frameIndex) => {
      const parts: Buffer[] = [];
      out.push(parts);
      if (frame[0] !== 0x64) {
        parts.push(frame);
        return;
      }
      const pieces: BinaryCopyPiece[] = this.reader.push(copyData(frame));
      for (const piece of pieces) {
        if (piece.kind === 'raw') {
          parts.push(piece.bytes);
          continue;
        }
        const column = this.planned.get(piece.index);
        const stored = column === undefined ? undefined : decodeBinary(column.typeOid, piece.value);
        if (column === undefined || stored === undefined) {
          // A value its codec cannot read is counted; it goes out as stored only to a role that
          // would see it unprotected, else as NULL (as DataRows do).
          this.metrics.undecodableValues++;
          parts.push(binaryCopyField(column === undefined || column.action === 'unprotect' ? piece.value : null));
          continue;
        }
        parts.push(binaryCopyField(piece.value));
        const list = held.get(piece.index) ?? [];
        list.push({ frame: frameIndex, slot: parts.length - 1, stored });
        held.set(piece.index, list);
      }
    });
    // Tuples, not frames: the header and the trailer may come in CopyData of their own.
    const rows = this.reader.rows - rowsBefore;
    for (const [index, fields] of held) {
      const column = this.planned.get(index);
      if (column === undefined) continue;
      const revealed = await revealColumn(this.engine, column.policy, column.action, fields.map((field) => field.stored), this.metrics);
      revealed.forEach((value, i) => {
        const field = fields[i];
        if (field === undefined || value === KEEP) return;
        const encoded = value === null ? null : encodeBinary(column.typeOid, value);
        // A revealed value that does not fit the type goes out as NULL rather than as stored bytes.
        (out[field.frame] as Buffer[])[field.slot] = binaryCopyField(encoded ?? null);
      });
    }
    return { frames: out.map((parts, i) => (frames[i]?.[0] !== 0x64 ? (parts[0] as Buffer) : copyDataMessage(Buffer.concat(parts)))), rows };
  }
}
