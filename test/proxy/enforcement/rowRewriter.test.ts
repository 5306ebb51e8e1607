/**
 * The batched DataRow rewriter (one buffer per batch, fields located in typed arrays) against the
 * plain one (a field array per row, a message per changed row): the same bytes and the same
 * counters for every read action, format and odd value.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../src/engine/index.js';
import { parsePolicies, type ColumnPolicy } from '../../../src/policy/index.js';
import { createPolicyMetrics } from '../../../src/proxy/enforcement/policyMetrics.js';
import type { PlannedField, ResultPlan } from '../../../src/proxy/enforcement/readPath/resultPlan.js';
import { rewriteDataRows, withoutTrailingSpaces, type InPlaceUnprotection } from '../../../src/proxy/enforcement/readPath/rowRewriter.js';
import { DEFAULT_DATE_STYLE, parseDateStyle, type DateStyle } from '../../../src/proxy/enforcement/valueCodecs/dateStyle.js';
import { encodeBinary, TYPE_OIDS } from '../../../src/proxy/enforcement/valueCodecs/valueCodecs.js';
import { dataRowMessage } from '../../../src/proxy/protocol/messages.js';
import { ProtocolViolation } from '../../../src/proxy/protocol/messageReaders.js';
import { rewriteDataRowsPlainly } from './support/referenceRowRewriter.js';

const policies = parsePolicies(`
columns:
  public.people.name: { kind: name, method: tokenise, scope: people, reveal: { app: plaintext, support: mask } }
  public.people.ssn: { kind: ssn, method: fpe, scope: people, reveal: { app: plaintext, support: mask } }
  public.people.born: { kind: date, method: fpe, scope: people, reveal: { app: plaintext, support: mask } }
  public.people.uid: { kind: uuid, method: fpe, scope: people, reveal: { app: plaintext, support: mask } }
  public.people.ip: { kind: ipv4, method: fpe, scope: people, reveal: { app: plaintext, support: mask } }
  public.people.card: { kind: ccn, method: fpe, scope: people, reveal: { app: plaintext, support: mask } }
`, 'policies.yaml').columns;

function policy(column: string): ColumnPolicy {
  const found = policies.find((candidate) => candidate.key.endsWith(`.${column}`));
  if (found === undefined) throw new Error(`no policy for ${column}`);
  return found;
}

const engine = createEngine({ masterKey: randomBytes(32) });
/** The proxy's in-place unprotect of a column, as policyHooks hands it out. */
const inPlace: InPlaceUnprotection = (columnPolicy) => engine.valueProtection(columnPolicy.kind, columnPolicy.engineOptions).unprotectInPlace;
const copies = (rows: readonly Buffer[]): Buffer[] => rows.map((row) => Buffer.from(row));
const plaintext = {
  // Short and long (past the ASCII fast path), ASCII and not.
  name: ['Zoë Ångström', 'José', 'Li Wei', '李小龍', 'O\'Brien', `Alexandra ${'Montgomery-'.repeat(8)}Smith`, `Ægir ${'Þórðarson '.repeat(8)}`],
  ssn: ['123-45-6789', '234-56-7890', '345-67-8901'],
  born: ['1990-05-17', '1975-12-01', '2001-02-28'],
  uid: ['3f2504e0-4f89-41d3-9a0c-0305e82c3301', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
  ip: ['192.168.1.20', '10.0.0.1'],
  card: ['4111 1111 1111 1111', '5500-0000-0000-0004', '340000000000009', '4012888888881881'],
};
const tokens: Record<keyof typeof plaintext, string[]> = { name: [], ssn: [], born: [], uid: [], ip: [], card: [] };

beforeAll(async () => {
  for (const column of Object.keys(plaintext) as (keyof typeof plaintext)[]) {
    tokens[column] = (await engine.protect(policy(column).kind, plaintext[column], policy(column).engineOptions)).result;
  }
});

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Copies of the rows, concatenated in runs of 1 to 40 (each run one frame). */
function inRuns(rows: readonly Buffer[], random: () => number): Buffer[] {
  const frames: Buffer[] = [];
  for (let at = 0; at < rows.length;) {
    const size = 1 + Math.floor(random() * 40);
    frames.push(Buffer.concat(rows.slice(at, at + size)));
    at += size;
  }
  return frames;
}

type Column = { readonly name: keyof typeof plaintext; readonly typeOid: number; readonly format: number } | { readonly name: 'other' };

/** A stored value as the server would send it: mostly tokens, some plaintext, odd bytes and NULLs. */
function storedValue(column: Column, random: () => number): Buffer | null {
  const roll = random();
  if (roll < 0.1) return null;
  if (column.name === 'other') return roll < 0.2 ? Buffer.alloc(0) : Buffer.from(`other ${Math.floor(random() * 1e6)} ✓`);
  const pick = (values: string[]): string => values[Math.floor(random() * values.length)] as string;
  let text = roll < 0.2 ? pick(plaintext[column.name]) : roll < 0.25 ? 'not a token at all' : pick(tokens[column.name]);
  if (column.typeOid === TYPE_OIDS.bpchar) text = text.padEnd(text.length + Math.floor(random() * 3), ' ');
  if (column.format === 0) return Buffer.from(text, 'utf8');
  if (roll < 0.3) return Buffer.from([1, 2, 3]); // no codec reads it
  return encodeBinary(column.typeOid, text) ?? Buffer.from([9]);
}

async function expectSameBytes(columns: readonly Column[], actions: readonly PlannedField['action'][], rowCount: number, seed: number, dateStyle: DateStyle): Promise<void> {
  const random = sequence(seed);
  const fields: PlannedField[] = [];
  columns.forEach((column, index) => {
    if (column.name === 'other') return;
    fields.push({ index, policy: policy(column.name), action: actions[fields.length % actions.length] as PlannedField['action'], format: column.format, typeOid: column.typeOid, typmod: -1 });
  });
  const plan: ResultPlan = { fieldCount: columns.length, fields };
  const rows = Array.from({ length: rowCount }, () => dataRowMessage(columns.map((column) => storedValue(column, random))));
  const batchedMetrics = createPolicyMetrics();
  const plainMetrics = createPolicyMetrics();
  const inPlaceMetrics = createPolicyMetrics();
  const groupedMetrics = createPolicyMetrics();
  // Each rewrite gets rows of its own: the in-place path writes into the rows it is given.
  const batched = await rewriteDataRows(copies(rows), plan, engine, batchedMetrics, dateStyle);
  const rewrittenInPlace = await rewriteDataRows(copies(rows), plan, engine, inPlaceMetrics, dateStyle, inPlace);
  // As the pump hands them over: runs of rows back to back in one frame, counted by the caller.
  const grouped = await rewriteDataRows(inRuns(rows, random), plan, engine, groupedMetrics, dateStyle, inPlace, rows.length);
  const plain = Buffer.concat(await rewriteDataRowsPlainly(rows, plan, engine, plainMetrics, dateStyle));
  expect(batched.equals(plain)).toBe(true);
  expect(rewrittenInPlace.equals(plain)).toBe(true);
  expect(grouped.equals(plain)).toBe(true);
  expect(batchedMetrics).toEqual(plainMetrics);
  expect(inPlaceMetrics).toEqual(plainMetrics);
  expect(groupedMetrics).toEqual(plainMetrics);
}

const TEXT_COLUMNS: Column[] = [
  { name: 'other' },
  { name: 'name', typeOid: TYPE_OIDS.text, format: 0 },
  { name: 'ssn', typeOid: TYPE_OIDS.varchar, format: 0 },
  { name: 'other' },
  { name: 'born', typeOid: TYPE_OIDS.date, format: 0 },
  { name: 'ip', typeOid: TYPE_OIDS.bpchar, format: 0 },
  { name: 'card', typeOid: TYPE_OIDS.text, format: 0 },
  { name: 'ssn', typeOid: TYPE_OIDS.bpchar, format: 0 },
];

const BINARY_COLUMNS: Column[] = [
  { name: 'born', typeOid: TYPE_OIDS.date, format: 1 },
  { name: 'other' },
  { name: 'uid', typeOid: TYPE_OIDS.uuid, format: 1 },
  { name: 'ip', typeOid: TYPE_OIDS.inet, format: 1 },
  { name: 'ssn', typeOid: TYPE_OIDS.text, format: 1 },
];

const ACTION_SETS: [string, PlannedField['action'][]][] = [['unprotect'], ['mask'], ['null'], ['unprotect-then-mask'], ['unprotect', 'mask', 'null']]
  .map((actions) => [actions.join(' + '), actions as PlannedField['action'][]]);

describe('rewriteDataRows (batched) against the plain rewriter', () => {
  it.each(ACTION_SETS)('text columns, %s', async (_label, actions) => {
    for (const [seed, style] of [[1, DEFAULT_DATE_STYLE], [2, parseDateStyle('German, DMY')], [3, parseDateStyle('SQL, DMY')], [4, parseDateStyle('Postgres, MDY')]] as const) {
      await expectSameBytes(TEXT_COLUMNS, actions, 300, seed, style);
    }
  });

  it.each(ACTION_SETS)('binary columns, %s', async (_label, actions) => {
    await expectSameBytes(BINARY_COLUMNS, actions, 300, 7, DEFAULT_DATE_STYLE);
  });

  it('refuses a batch whose rows are not what the caller counted, or are cut short, before rewriting anything', async () => {
    const plan: ResultPlan = { fieldCount: 2, fields: [{ index: 0, policy: policy('ssn'), action: 'unprotect', format: 0, typeOid: TYPE_OIDS.text, typmod: -1 }] };
    const rows = [dataRowMessage([Buffer.from(tokens.ssn[0] as string), Buffer.from('x')]), dataRowMessage([null, Buffer.from('y')])];
    const frames = (): Buffer[] => [Buffer.concat(rows)];
    await expect(rewriteDataRows(frames(), plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace, 1)).rejects.toThrow(ProtocolViolation);
    await expect(rewriteDataRows(frames(), plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace, 3)).rejects.toThrow(ProtocolViolation);
    const cut = Buffer.concat(rows).subarray(0, -2);
    await expect(rewriteDataRows([cut], plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace, 2)).rejects.toThrow(ProtocolViolation);
    await expect(rewriteDataRows([Buffer.concat([rows[0] as Buffer, Buffer.from([0x44, 0, 0, 0, 2])])], plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace, 2)).rejects.toThrow(ProtocolViolation);
    expect(await rewriteDataRows(frames(), plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace, 2)).toEqual(
      await rewriteDataRows(frames(), plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace));
  });

  it('a batch of one row, and rows whose planned fields are all NULL', async () => {
    await expectSameBytes(TEXT_COLUMNS, ['unprotect'], 1, 11, DEFAULT_DATE_STYLE);
    const plan: ResultPlan = { fieldCount: 2, fields: [{ index: 1, policy: policy('ssn'), action: 'unprotect', format: 0, typeOid: TYPE_OIDS.text, typmod: -1 }] };
    const rows = [dataRowMessage([Buffer.from('a'), null]), dataRowMessage([null, null])];
    expect(await rewriteDataRows(rows, plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE)).toEqual(Buffer.concat(rows));
  });

  it('reveals a token to the plaintext, leaves a non-token as stored and masks it for a mask view', async () => {
    const plan = (action: PlannedField['action']): ResultPlan => ({ fieldCount: 2, fields: [{ index: 0, policy: policy('ssn'), action, format: 0, typeOid: TYPE_OIDS.text, typmod: -1 }] });
    const rows = [dataRowMessage([Buffer.from(tokens.ssn[0] as string), Buffer.from('x')]), dataRowMessage([Buffer.from('plain text'), null])];
    const metrics = createPolicyMetrics();
    const revealed = await rewriteDataRows(rows, plan('unprotect'), engine, metrics, DEFAULT_DATE_STYLE);
    expect(revealed).toEqual(Buffer.concat([dataRowMessage([Buffer.from(plaintext.ssn[0] as string), Buffer.from('x')]), rows[1] as Buffer]));
    expect(metrics.unprotectFailures).toBe(1);
    const nulled = await rewriteDataRows(rows, plan('null'), engine, createPolicyMetrics(), DEFAULT_DATE_STYLE);
    expect(nulled).toEqual(Buffer.concat([dataRowMessage([null, Buffer.from('x')]), dataRowMessage([null, null])]));
  });
});

/** A plan that unprotects each column as text, in the order given (field i is column i). */
function unprotectingPlan(...columns: [keyof typeof plaintext, number][]): ResultPlan {
  return {
    fieldCount: columns.length,
    fields: columns.map(([column, typeOid], index) => ({ index, policy: policy(column), action: 'unprotect' as const, format: 0, typeOid, typmod: -1 })),
  };
}

describe('rewriteDataRows in place', () => {
  it('rewrites ssn, card and ISO date fields where they lie, and sends the rest the string way', async () => {
    const plan = unprotectingPlan(['ssn', TYPE_OIDS.text], ['card', TYPE_OIDS.text], ['born', TYPE_OIDS.date], ['name', TYPE_OIDS.text]);
    const row = (i: number): Buffer => dataRowMessage([tokens.ssn[i], tokens.card[i], tokens.born[i], tokens.name[i]].map((t) => Buffer.from(t as string)));
    const odd = dataRowMessage([Buffer.from('not an ssn'), null, Buffer.from('infinity'), Buffer.from('x')]);
    const metrics = createPolicyMetrics();
    const revealed = await rewriteDataRows([row(0), odd, row(1)], plan, engine, metrics, DEFAULT_DATE_STYLE, inPlace);
    const expected = (i: number): Buffer => dataRowMessage([plaintext.ssn[i], plaintext.card[i], plaintext.born[i], plaintext.name[i]].map((t) => Buffer.from(t as string)));
    expect(revealed).toEqual(Buffer.concat([expected(0), odd, expected(1)]));
    // Eight revealed, three in the odd row tried and left as stored (the NULL is not a value).
    expect(metrics.valuesRevealed).toBe(11);
    expect(metrics.unprotectFailures).toBe(3);
  });

  it('runs past its slice size (the loop turns between slices) with the same bytes', async () => {
    await expectSameBytes(TEXT_COLUMNS, ['unprotect'], 1300, 21, DEFAULT_DATE_STYLE);
  });

  it('lets the event loop turn every 512 values, counting all its columns together', async () => {
    const plan = unprotectingPlan(['ssn', TYPE_OIDS.text], ['card', TYPE_OIDS.text], ['born', TYPE_OIDS.date]);
    const rows = Array.from({ length: 2048 }, (_, i) => dataRowMessage([tokens.ssn[i % 3], tokens.card[i % 4], tokens.born[i % 3]].map((t) => Buffer.from(t as string))));
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const metrics = createPolicyMetrics();
    const revealed = await rewriteDataRows(rows, plan, engine, metrics, DEFAULT_DATE_STYLE, inPlace);
    counting = false;
    expect(metrics.valuesRevealed).toBe(3 * 2048);
    expect(metrics.unprotectFailures).toBe(0);
    // 6 144 values in runs of 512: eleven turns between them.
    expect(turns).toBeGreaterThanOrEqual(11);
    expect(revealed.subarray(0, (rows[0] as Buffer).length)).toEqual(dataRowMessage([plaintext.ssn[0], plaintext.card[0], plaintext.born[0]].map((t) => Buffer.from(t as string))));
  });

  it('leaves a field said longer than its frame (a malformed message) to the string way', async () => {
    const plan: ResultPlan = { fieldCount: 1, fields: [{ index: 0, policy: policy('ssn'), action: 'unprotect', format: 0, typeOid: TYPE_OIDS.text, typmod: -1 }] };
    // An 11-byte ssn token whose frame stops 3 bytes early.
    const whole = dataRowMessage([Buffer.from(tokens.ssn[0] as string)]);
    const cut = whole.subarray(0, whole.length - 3);
    cut.writeInt32BE(cut.length - 1, 1);
    const viaStrings = createPolicyMetrics();
    const viaInPlace = createPolicyMetrics();
    const expected = await rewriteDataRows([Buffer.from(cut)], plan, engine, viaStrings, DEFAULT_DATE_STYLE);
    expect(await rewriteDataRows([Buffer.from(cut)], plan, engine, viaInPlace, DEFAULT_DATE_STYLE, inPlace)).toEqual(expected);
    expect(viaInPlace).toEqual(viaStrings);
    expect(viaInPlace.unprotectFailures).toBe(1);
  });

  it('reads nothing of the next row when a field says it is longer than its own row', async () => {
    // A text ssn and a binary uuid (any 16 bytes decode as one), each cut 3 bytes short of what its length says.
    const cases = [
      { column: 'ssn' as const, typeOid: TYPE_OIDS.text, format: 0, stored: Buffer.from(tokens.ssn[0] as string) },
      { column: 'uid' as const, typeOid: TYPE_OIDS.uuid, format: 1, stored: encodeBinary(TYPE_OIDS.uuid, tokens.uid[0] as string) as Buffer },
    ];
    for (const { column, typeOid, format, stored } of cases) {
      const whole = dataRowMessage([stored]);
      const cut = Buffer.from(whole.subarray(0, whole.length - 3));
      cut.writeInt32BE(cut.length - 1, 1);
      // The next row starts where the cut field would have gone on: none of its bytes may be read as the cut field's.
      const next = dataRowMessage([Buffer.from(stored)]);
      for (const action of ['unprotect', 'mask', 'null'] as const) {
        const plan: ResultPlan = { fieldCount: 1, fields: [{ index: 0, policy: policy(column), action, format, typeOid, typmod: -1 }] };
        const apart = createPolicyMetrics();
        const together = createPolicyMetrics();
        const expected = await rewriteDataRows([Buffer.from(cut), Buffer.from(next)], plan, engine, apart, DEFAULT_DATE_STYLE, inPlace);
        expect(await rewriteDataRows([Buffer.concat([cut, next])], plan, engine, together, DEFAULT_DATE_STYLE, inPlace)).toEqual(expected);
        expect(together).toEqual(apart);
      }
    }
  });

  it('refuses a frame that does not end on a row\'s end', async () => {
    const plan = unprotectingPlan(['ssn', TYPE_OIDS.text]);
    const row = dataRowMessage([Buffer.from(tokens.ssn[0] as string)]);
    await expect(rewriteDataRows([Buffer.concat([row, row.subarray(0, 9)])], plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace)).rejects.toThrow();
    // A row without its field count, or shorter than its fields, is refused as before, not read past.
    const short = Buffer.from([0x44, 0, 0, 0, 5, 0]);
    await expect(rewriteDataRows([Buffer.concat([short, row])], plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace)).rejects.toThrow(RangeError);
    const noField = Buffer.from([0x44, 0, 0, 0, 8, 0, 1, 0, 0]);
    await expect(rewriteDataRows([Buffer.concat([noField, row])], plan, engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, inPlace)).rejects.toThrow(RangeError);
  });

  it('is not used for a mask view, bpchar, binary format or a non-ISO DateStyle', async () => {
    const asked: string[] = [];
    const watching: InPlaceUnprotection = (columnPolicy) => {
      asked.push(columnPolicy.kind);
      return inPlace(columnPolicy);
    };
    const field = (action: PlannedField['action'], typeOid: number, format: number, column: 'ssn' | 'born' = 'ssn'): ResultPlan => ({ fieldCount: 1, fields: [{ index: 0, policy: policy(column), action, format, typeOid, typmod: -1 }] });
    const rows = (): Buffer[] => [dataRowMessage([Buffer.from(tokens.ssn[0] as string)])];
    await rewriteDataRows(rows(), field('mask', TYPE_OIDS.text, 0), engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, watching);
    await rewriteDataRows(rows(), field('unprotect-then-mask', TYPE_OIDS.text, 0), engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, watching);
    await rewriteDataRows(rows(), field('unprotect', TYPE_OIDS.bpchar, 0), engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, watching);
    await rewriteDataRows(rows(), field('unprotect', TYPE_OIDS.text, 1), engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, watching);
    await rewriteDataRows([dataRowMessage([Buffer.from('05/17/1990')])], field('unprotect', TYPE_OIDS.date, 0, 'born'), engine, createPolicyMetrics(), parseDateStyle('SQL, MDY'), watching);
    expect(asked).toEqual([]);
    await rewriteDataRows(rows(), field('unprotect', TYPE_OIDS.varchar, 0), engine, createPolicyMetrics(), DEFAULT_DATE_STYLE, watching);
    expect(asked).toEqual(['ssn']);
  });
});

describe('rewriteDataRows fails closed', () => {
  it('refuses an engine answer with fewer values than it was given, rather than send a stored value where a mask was due', async () => {
    const short: Engine = Object.assign(Object.create(engine) as Engine, {
      protect: async (...args: Parameters<Engine['protect']>) => {
        const answer = await engine.protect(...args);
        return { ...answer, result: answer.result.slice(1) };
      },
    });
    const plan: ResultPlan = { fieldCount: 1, fields: [{ index: 0, policy: policy('ssn'), action: 'mask', format: 0, typeOid: TYPE_OIDS.text, typmod: -1 }] };
    const rows = [dataRowMessage([Buffer.from('123-45-6789')]), dataRowMessage([Buffer.from('234-56-7890')])];
    await expect(rewriteDataRows(rows, plan, short, createPolicyMetrics(), DEFAULT_DATE_STYLE)).rejects.toThrow(/different number of values/);
  });

  it('trims bpchar padding in linear time, as / +$/ would', () => {
    for (const text of ['', ' ', 'a', 'a  ', '  a', ' a b  ', 'a\t ', 'ü  ']) expect(withoutTrailingSpaces(text)).toBe(text.replace(/ +$/, ''));
    // Spaces followed by another character: quadratic for the regex, one pass for the loop.
    const adversarial = `a${' '.repeat(1_000_000)}b`;
    expect(withoutTrailingSpaces(adversarial)).toBe(adversarial);
  });
});
