/** The binary COPY TO rewriter alone: a value its codec cannot read reaches only a role that sees it unprotected. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/index.js';
import { parsePolicies } from '../../../src/policy/index.js';
import { createPolicyMetrics } from '../../../src/proxy/enforcement/policyMetrics.js';
import { BINARY_COPY_SIGNATURE, binaryCopyField } from '../../../src/proxy/enforcement/readPath/binaryCopyFormat.js';
import { BinaryCopyOutRewriter } from '../../../src/proxy/enforcement/readPath/binaryCopyOutRewriter.js';
import type { CopyOutColumn } from '../../../src/proxy/enforcement/writePath/copyTargets.js';
import { copyDataMessage } from '../../../src/proxy/protocol/messages.js';
import { copyData } from '../../../src/proxy/protocol/messageReaders.js';

const INT4 = 23;
const policy = parsePolicies(`
columns:
  public.people.code: { kind: numeric, method: passthrough, reveal: { app: plaintext, support: mask } }
`, 'policies.yaml').columns[0];

/** The header and one row of one field. */
function copyBody(field: Buffer | null): Buffer {
  const count = Buffer.alloc(2);
  count.writeInt16BE(1);
  return Buffer.concat([BINARY_COPY_SIGNATURE, Buffer.alloc(8), count, binaryCopyField(field)]);
}

// Three bytes where an int4 takes four: no codec can read it.
const UNREADABLE = Buffer.from([1, 2, 3]);

async function bodyAfter(action: CopyOutColumn['action']): Promise<Buffer> {
  if (policy === undefined) throw new Error('no policy');
  const metrics = createPolicyMetrics();
  const rewriter = new BinaryCopyOutRewriter(
    { direction: 'out', columnCount: 1, columns: [{ policy, action, index: 0, typeOid: INT4 }], options: undefined },
    createEngine({ masterKey: randomBytes(32) }), metrics,
  );
  const [frame] = (await rewriter.rewrite([copyDataMessage(copyBody(UNREADABLE))])).frames;
  expect(metrics.undecodableValues).toBe(1);
  return copyData(frame as Buffer);
}

describe('BinaryCopyOutRewriter', () => {
  it('sends a value its codec cannot read as stored to an unprotect role, as NULL to a masked one', async () => {
    expect(await bodyAfter('unprotect')).toEqual(copyBody(UNREADABLE));
    expect(await bodyAfter('mask')).toEqual(copyBody(null));
  });
});
