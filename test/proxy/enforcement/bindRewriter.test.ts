/**
 * The Bind rewriter alone (no database): the Bind it writes holds exactly what protecting each
 * value on its own gives, in the client's formats, whichever path the statement takes.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/index.js';
import { parsePolicies, type ColumnPolicy } from '../../../src/policy/index.js';
import { PolicyRefusal } from '../../../src/proxy/enforcement/policyRefusal.js';
import { formatTextArray } from '../../../src/proxy/enforcement/valueCodecs/arrayCodecs.js';
import { DEFAULT_DATE_STYLE } from '../../../src/proxy/enforcement/valueCodecs/dateStyle.js';
import { decodeBinary, encodeBinary, TYPE_OIDS } from '../../../src/proxy/enforcement/valueCodecs/valueCodecs.js';
import { bindFrame, splicedBindFrame, type BindValue } from '../../../src/proxy/enforcement/writePath/bindFrame.js';
import { rewriteBind, rewriteBindNow, type BoundStatement } from '../../../src/proxy/enforcement/writePath/bindRewriter.js';
import { boundValueLength } from '../../../src/proxy/enforcement/writePath/valueProtector.js';
import { coalesceEngineCalls } from '../../../src/proxy/enforcement/writePath/coalescedEngine.js';
import type { ParamPlan } from '../../../src/proxy/enforcement/writePath/statementRewriter.js';
import { readBind, readBindValueLayout, type BindMessage } from '../../../src/proxy/protocol/messageReaders.js';
import { bindMessage } from '../../../src/proxy/protocol/messages.js';

const POLICIES = parsePolicies(`
columns:
  public.people.ssn: { kind: ssn, method: fpe, scope: people, reveal: { app: plaintext } }
  public.people.card: { kind: ccn, method: fpe, scope: payments, reveal: { app: plaintext } }
  public.people.phone: { kind: numeric, method: tokenise, scope: people, reveal: { app: plaintext } }
  public.people.account: { kind: numeric, method: fpe, scope: people, reveal: { app: plaintext } }
  public.people.branch: { kind: numeric, method: fpe, scope: branches, reveal: { app: plaintext } }
`, 'policies.yaml');

function policy(column: string): ColumnPolicy {
  return POLICIES.get('public', 'people', column) as ColumnPolicy;
}

const engine = createEngine({ masterKey: randomBytes(32) });
const ssn: ParamPlan = { policy: policy('ssn'), array: false, columnType: TYPE_OIDS.text };
const card: ParamPlan = { policy: policy('card'), array: false, columnType: TYPE_OIDS.text };
const phone: ParamPlan = { policy: policy('phone'), array: false, columnType: TYPE_OIDS.text };
const account: ParamPlan = { policy: policy('account'), array: false, columnType: TYPE_OIDS.int8 };
const branch: ParamPlan = { policy: policy('branch'), array: false, columnType: TYPE_OIDS.int8 };

function bind(values: readonly (string | Buffer | null)[], paramFormats: readonly number[] = []): { frame: Buffer; message: BindMessage } {
  const frame = bindMessage({
    portal: '', statement: 'ins', paramFormats, resultFormats: [1],
    values: values.map((value) => (typeof value === 'string' ? Buffer.from(value, 'utf8') : value)),
  });
  return { frame, message: readBind(frame) };
}

async function protectAlone(plan: ParamPlan, text: string): Promise<string> {
  return (await engine.protect(plan.policy.kind, [text], plan.policy.engineOptions)).result[0] as string;
}

describe('bindFrame', () => {
  it('writes what bindMessage writes, for values given as bytes or as text', () => {
    const cases: BindMessage[] = [
      { portal: '', statement: '', paramFormats: [], values: [], resultFormats: [] },
      { portal: 'pörtal', statement: 'stätement', paramFormats: [0, 1, 0], values: [Buffer.from('a'), null, Buffer.alloc(0)], resultFormats: [1, 0] },
      { portal: 'p', statement: 's', paramFormats: [1], values: [Buffer.from([0, 0, 0, 7]), Buffer.from('ünïcode ✓', 'utf8')], resultFormats: [1] },
    ];
    for (const message of cases) {
      expect(bindFrame(message, message.paramFormats, message.values)).toEqual(bindMessage(message));
      const asText = message.values.map((value, i) => (value !== null && i % 2 === 1 ? value.toString('utf8') : value));
      expect(bindFrame(message, message.paramFormats, asText)).toEqual(bindMessage(message));
    }
  });
});

describe('splicedBindFrame', () => {
  const bytesOrNull = fc.option(fc.oneof(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ minLength: 60, maxLength: 200 })), { nil: null });
  const replacement = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.string({ unit: 'grapheme', maxLength: 90 }),
    fc.uint8Array({ maxLength: 100 }).map((bytes) => Buffer.from(bytes)),
  );

  it('writes what bindFrame writes for the same values, whichever of them are replaced (property)', () => {
    fc.assert(fc.property(
      fc.stringMatching(/^[a-zA-Z_äö✓]{0,8}$/),
      fc.stringMatching(/^[a-zA-Z_äö✓]{0,8}$/),
      fc.array(bytesOrNull, { maxLength: 6 }),
      fc.array(fc.constantFrom(0, 1), { maxLength: 6 }),
      fc.array(fc.constantFrom(0, 1), { maxLength: 3 }),
      fc.array(replacement, { maxLength: 8 }),
      (portal, statement, sent, formats, resultFormats, replacements) => {
        const message: BindMessage = { portal, statement, paramFormats: formats, values: sent.map((v) => (v === null ? null : Buffer.from(v))), resultFormats };
        const frame = bindMessage(message);
        const replaced = replacements.slice(0, sent.length);
        const merged: BindValue[] = message.values.map((value, i) => (replaced[i] === undefined ? value : replaced[i] as BindValue));
        expect(splicedBindFrame(frame, readBindValueLayout(frame), replaced)).toEqual(bindFrame(message, formats, merged));
      },
    ), { numRuns: 300 });
  });

  it('writes NULL as -1 whatever negative length was sent, as readBind and bindFrame do', () => {
    const frame = bindMessage({ portal: '', statement: 's', paramFormats: [], values: [null, Buffer.from('ab')], resultFormats: [] });
    const at = frame.indexOf(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    frame.writeInt32BE(-5, at);
    const layout = readBindValueLayout(frame);
    const read = readBind(frame);
    expect(splicedBindFrame(frame, layout, [])).toEqual(bindFrame(read, read.paramFormats, read.values));
    expect(splicedBindFrame(frame, layout, [undefined, 'xyz'])).toEqual(bindFrame(read, read.paramFormats, [null, 'xyz']));
  });

  it('refuses a truncated Bind as readBind does', () => {
    const frame = bindMessage({ portal: '', statement: 's', paramFormats: [], values: [Buffer.from('abcdef')], resultFormats: [0] });
    for (const cut of [frame.length - 1, frame.length - 3, frame.length - 6]) {
      const truncated = frame.subarray(0, cut);
      expect(() => readBind(truncated)).toThrow(RangeError);
      expect(() => readBindValueLayout(truncated)).toThrow(RangeError);
    }
  });
});

describe('rewriteBind', () => {
  it('writes each protected value as protecting it alone gives it, and leaves plain and NULL values as sent', async () => {
    const statement: BoundStatement = { params: new Map([[1, ssn], [2, card], [4, phone]]), paramTypes: [0, 0, 0, 0, 0] };
    const { frame, message } = bind(['123-45-6789', '4111111111111111', 'kept', '5551234567', null]);
    const rewritten = await rewriteBind(frame, message, statement, engine, DEFAULT_DATE_STYLE);
    const expected = bindMessage({
      ...message,
      values: [
        Buffer.from(await protectAlone(ssn, '123-45-6789')), Buffer.from(await protectAlone(card, '4111111111111111')),
        Buffer.from('kept'), Buffer.from(await protectAlone(phone, '5551234567')), null,
      ],
    });
    expect(rewritten).toEqual(expected);
    expect(rewritten.toString('utf8')).not.toContain('123-45-6789');
  });

  it('gives the same bytes when the sessions\' calls are merged per loop turn', async () => {
    const statement: BoundStatement = { params: new Map([[1, ssn], [2, card], [3, phone]]), paramTypes: [] };
    const binds = Array.from({ length: 8 }, (_, i) => bind([`123-45-67${10 + i}`, '4111111111111111', `55512345${10 + i}`]));
    const alone = await Promise.all(binds.map(({ frame, message }) => rewriteBind(frame, message, statement, engine, DEFAULT_DATE_STYLE)));
    const coalesced = coalesceEngineCalls(engine);
    const merged = await Promise.all(binds.map(({ frame, message }) => rewriteBind(frame, message, statement, coalesced, DEFAULT_DATE_STYLE)));
    expect(merged).toEqual(alone);
  });

  it('reads and writes binary values in their declared type, and fills appended parameters with their source\'s value and format', async () => {
    // $3 is pgveil's: the client's $1 used a second time, for another column policy.
    const statement: BoundStatement = {
      params: new Map([[1, account], [3, branch]]), paramTypes: [TYPE_OIDS.int8, 0, TYPE_OIDS.int8], extraParams: new Map([[3, 1]]), clientParamCount: 2,
    };
    const { frame, message } = bind([encodeBinary(TYPE_OIDS.int8, '123456789') as Buffer, 'kept'], [1, 0]);
    const rewritten = readBind(await rewriteBind(frame, message, statement, engine, DEFAULT_DATE_STYLE));
    expect(rewritten.paramFormats).toEqual([1, 0, 1]);
    expect(rewritten.values.map((value) => value && decodeBinary(TYPE_OIDS.int8, value))).toEqual([
      await protectAlone(account, '123456789'), expect.anything(), await protectAlone(branch, '123456789'),
    ]);
    expect(rewritten.values[1]?.toString('utf8')).toBe('kept');
  });

  it('protects array elements one by one and scalars alike in a statement with an array parameter', async () => {
    const statement: BoundStatement = { params: new Map([[1, { ...ssn, array: true }], [2, card]]), paramTypes: [] };
    const { frame, message } = bind(['{123-45-6789,NULL,987-65-4321}', '4111111111111111']);
    const rewritten = readBind(await rewriteBind(frame, message, statement, engine, DEFAULT_DATE_STYLE));
    expect(rewritten.values[0]?.toString('utf8')).toBe(formatTextArray([await protectAlone(ssn, '123-45-6789'), null, await protectAlone(ssn, '987-65-4321')]));
    expect(rewritten.values[1]?.toString('utf8')).toBe(await protectAlone(card, '4111111111111111'));
  });

  it('returns the frame as sent when no value needs protecting', async () => {
    const statement: BoundStatement = { params: new Map([[1, ssn]]), paramTypes: [] };
    const { frame, message } = bind([null, 'kept']);
    expect(await rewriteBind(frame, message, statement, engine, DEFAULT_DATE_STYLE)).toBe(frame);
  });

  it('refuses with the policy of the first parameter whose value is not of its kind, whatever the others', async () => {
    const statement: BoundStatement = { params: new Map([[1, phone], [2, ssn], [3, card]]), paramTypes: [] };
    const { frame, message } = bind(['5551234567', 'not an ssn', 'not a card']);
    const refusal = await rewriteBind(frame, message, statement, engine, DEFAULT_DATE_STYLE).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PolicyRefusal);
    expect((refusal as PolicyRefusal).message).toContain('public.people.ssn');
    expect((refusal as PolicyRefusal).message).not.toContain('not an ssn');
  });

  it('refuses a Bind that carries no value for a protected parameter, on either path', async () => {
    const statement: BoundStatement = { params: new Map([[1, phone], [3, ssn]]), paramTypes: [0, 0, 0] };
    const { frame, message } = bind(['5551234567', 'kept']);
    const refusal = await rewriteBind(frame, message, statement, engine, DEFAULT_DATE_STYLE).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PolicyRefusal);
    expect((refusal as PolicyRefusal).sqlState).toBe('08P01');
    expect((refusal as PolicyRefusal).message).toContain('$3');
    const inline = (plan: ColumnPolicy): ReturnType<typeof engine.valueProtection> => engine.valueProtection(plan.kind, plan.engineOptions);
    expect(() => rewriteBindNow(frame, statement, inline, 4096, DEFAULT_DATE_STYLE)).toThrow(/no value for parameter \$3/);
  });

  it('refuses a binary value it cannot read before protecting any value', async () => {
    let calls = 0;
    const counting = { ...engine, protect: (...args: Parameters<typeof engine.protect>) => { calls++; return engine.protect(...args); } };
    const statement: BoundStatement = { params: new Map([[1, ssn], [2, account]]), paramTypes: [0, TYPE_OIDS.int8] };
    const { frame, message } = bind(['123-45-6789', Buffer.from([1, 2, 3])], [0, 1]);
    const refusal = await rewriteBind(frame, message, statement, counting, DEFAULT_DATE_STYLE).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PolicyRefusal);
    expect((refusal as PolicyRefusal).message).toContain('cannot be read');
    expect(calls).toBe(0);
  });
});

describe('rewriteBindNow', () => {
  const MAX_BYTES = 24;
  const inline = (plan: ColumnPolicy): ReturnType<typeof engine.valueProtection> | undefined => {
    const protection = engine.valueProtection(plan.kind, plan.engineOptions);
    return protection.immediate ? protection : undefined;
  };
  const bounded = boundValueLength(engine, MAX_BYTES);
  const outcome = async (run: () => Buffer | undefined | Promise<Buffer>): Promise<string> => {
    try {
      const bytes = await run();
      return bytes === undefined ? 'not inline' : bytes.toString('hex');
    } catch (error) {
      return error instanceof PolicyRefusal ? `refused ${error.sqlState}: ${error.message}` : `failed: ${String(error)}`;
    }
  };
  const value = fc.oneof(
    fc.constantFrom('123-45-6789', '4111111111111111', '5551234567', '42', 'not of the kind', 'x'.repeat(MAX_BYTES + 1), '', '12'),
    fc.stringMatching(/^[0-9]{3}-[0-9]{2}-[0-9]{4}$/),
    fc.stringMatching(/^4[0-9]{15}$/),
  );

  it('gives rewriteBind\'s bytes or refusal, for scalars of columns with bounded one-value work', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.option(fc.constantFrom(ssn, card, phone), { nil: undefined }), { minLength: 1, maxLength: 5 }),
      fc.array(fc.option(value, { nil: null }), { minLength: 5, maxLength: 5 }),
      // Text or binary (a text column's binary form is its UTF-8), per value or for all; sometimes a value short.
      fc.oneof(fc.constant([]), fc.constantFrom([0], [1]), fc.array(fc.constantFrom(0, 1), { minLength: 5, maxLength: 5 })),
      fc.integer({ min: 0, max: 4 }).map((n) => (n === 0 ? 1 : 0)),
      async (plans, values, formats, missing) => {
        const params = new Map<number, ParamPlan>();
        plans.forEach((plan, i) => { if (plan !== undefined) params.set(i + 1, plan); });
        const statement: BoundStatement = { params, paramTypes: plans.map(() => 0) };
        const sent = values.slice(0, Math.max(0, plans.length - missing));
        const { frame, message } = bind(sent, formats.length > 1 ? formats.slice(0, sent.length) : formats);
        const now = await outcome(() => rewriteBindNow(frame, statement, inline, MAX_BYTES, DEFAULT_DATE_STYLE));
        expect(now).not.toBe('not inline');
        expect(now).toBe(await outcome(() => rewriteBind(frame, message, statement, bounded, DEFAULT_DATE_STYLE)));
      },
    ), { numRuns: 150 });
  });

  it('leaves to rewriteBind the statements it cannot do inline: arrays, fpe that may build a table, many values', () => {
    const withArray: BoundStatement = { params: new Map([[1, { ...ssn, array: true }]]), paramTypes: [] };
    expect(rewriteBindNow(bind(['{123-45-6789}']).frame, withArray, inline, MAX_BYTES, DEFAULT_DATE_STYLE)).toBeUndefined();
    const tableBound: BoundStatement = { params: new Map([[1, ssn], [2, account]]), paramTypes: [0, TYPE_OIDS.int8] };
    expect(rewriteBindNow(bind(['123-45-6789', '42']).frame, tableBound, inline, MAX_BYTES, DEFAULT_DATE_STYLE)).toBeUndefined();
    const many: BoundStatement = { params: new Map(Array.from({ length: 17 }, (_, i) => [i + 1, ssn] as const)), paramTypes: [] };
    expect(rewriteBindNow(bind(Array.from({ length: 17 }, () => '123-45-6789')).frame, many, inline, MAX_BYTES, DEFAULT_DATE_STYLE)).toBeUndefined();
  });
});
