/**
 * `COPY table FROM STDIN (FORMAT binary)` into a table with protected columns: the stream is read
 * as it arrives (readPath/binaryCopyFormat.ts); other fields pass through, each protected field is
 * decoded with its type's binary codec, protected (one engine call per policy for the fields of a
 * CopyData message) and encoded again. Types without a codec, malformed data and fields over
 * `proxy.maxProtectedValueBytes` fail the COPY; nothing of a refused stream is forwarded after it.
 */
import type { ColumnPolicy } from '../../../policy/index.js';
import type { Engine } from '../../../engine/index.js';
import type { CopyFromTarget } from '../../sql/index.js';
import type { ColumnPolicies } from '../catalog/columnPolicies.js';
import { BinaryCopyError, BinaryCopyReader, binaryCopyField } from '../readPath/binaryCopyFormat.js';
import { PolicyRefusal, unsupportedRefusal, valueRefusal } from '../policyRefusal.js';
import { decodeBinary, encodeBinary, hasBinaryCodec } from '../valueCodecs/valueCodecs.js';
import { ProtectionBatch } from './valueProtector.js';

const BAD_COPY_FORMAT = '22P04';
const PROGRAM_LIMIT_EXCEEDED = '54000';

interface ProtectedField {
  readonly name: string;
  readonly policy: ColumnPolicy;
  readonly typeOid: number;
}

export class BinaryCopyInRewriter {
  private readonly reader: BinaryCopyReader;
  private readonly fields = new Map<number, ProtectedField>();
  /** A protected column pgveil cannot read in binary: the COPY fails at its first data. */
  private readonly refusal: PolicyRefusal | undefined;

  constructor(target: CopyFromTarget, policies: ColumnPolicies, private readonly engine: Engine, maxValueBytes: number) {
    const relation = policies.relationOf(target);
    let refusal: PolicyRefusal | undefined;
    target.columns.forEach((column, index) => {
      if (!column.protected) return;
      const name = column.column.column;
      const policy = policies.policyOfColumn(column.column);
      const typeOid = relation?.columns.find((candidate) => candidate.name === name)?.typeOid ?? 0;
      if (policy === undefined) {
        refusal ??= unsupportedRefusal(`pgveil refused the COPY: no policy found for protected column ${name}`);
        return;
      }
      if (!hasBinaryCodec(typeOid)) {
        refusal ??= unsupportedRefusal(`pgveil refused the COPY: protected column ${target.table}.${name} is of a type pgveil cannot read in binary COPY (type ${typeOid}); use COPY … FROM STDIN in text or CSV format`);
      }
      this.fields.set(index, { name, policy, typeOid });
    });
    this.refusal = refusal;
    this.reader = new BinaryCopyReader(target.columns.length, (index) => (this.fields.has(index) ? maxValueBytes : undefined));
  }

  async data(bytes: Buffer): Promise<Buffer> {
    if (this.refusal !== undefined) throw this.refusal;
    const pieces = this.read(() => this.reader.push(bytes));
    const out: Buffer[] = [];
    const batch = new ProtectionBatch();
    for (const piece of pieces) {
      if (piece.kind === 'raw') {
        out.push(piece.bytes);
        continue;
      }
      const field = this.fields.get(piece.index) as ProtectedField;
      const text = decodeBinary(field.typeOid, piece.value);
      if (text === undefined) throw valueRefusal(field.policy, `row ${piece.row}: the binary value cannot be read as type ${field.typeOid}; use COPY in text or CSV format`);
      const slot = out.length;
      out.push(Buffer.alloc(0));
      batch.add(field.policy, text, (protectedText) => {
        const encoded = encodeBinary(field.typeOid, protectedText);
        if (encoded === undefined) throw valueRefusal(field.policy, `the protected value does not fit type ${field.typeOid}`);
        out[slot] = binaryCopyField(encoded);
      });
    }
    if (batch.size > 0) await batch.run(this.engine);
    return Buffer.concat(out);
  }

  /** The client's CopyDone. */
  async end(): Promise<Buffer> {
    if (this.refusal !== undefined) throw this.refusal;
    this.read(() => this.reader.end());
    return Buffer.alloc(0);
  }

  private read<T>(step: () => T): T {
    try {
      return step();
    } catch (error) {
      if (!(error instanceof BinaryCopyError)) throw error;
      if (error.tooLong) throw new PolicyRefusal(PROGRAM_LIMIT_EXCEEDED, `pgveil refused the COPY: ${error.message}`);
      throw new PolicyRefusal(BAD_COPY_FORMAT, `pgveil refused the COPY: ${error.message}`);
    }
  }
}
