/** Binary COPY: FROM STDIN into protected columns (as asyncpg and psycopg send it), and TO STDOUT. */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { describe, expect, it } from 'vitest';
import { SUPPORT, useAppHarness } from './support/policyHarness.js';

const shared = useAppHarness();

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

function int16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeInt16BE(value);
  return bytes;
}

function field(value: Buffer | null): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(value === null ? -1 : value.length);
  return value === null ? prefix : Buffer.concat([prefix, value]);
}

function binaryCopy(rows: readonly (readonly (Buffer | null)[])[], trailer = true): Buffer {
  return Buffer.concat([SIGNATURE, Buffer.alloc(8), ...rows.flatMap((row) => [int16(row.length), ...row.map(field)]), ...(trailer ? [int16(-1)] : [])]);
}

function date(iso: string): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(Math.round((Date.parse(`${iso}T00:00:00Z`) - Date.UTC(2000, 0, 1)) / 86_400_000));
  return bytes;
}

const uuid = (text: string): Buffer => Buffer.from(text.replace(/-/g, ''), 'hex');
const text = (value: string): Buffer => Buffer.from(value, 'utf8');

/** Cuts the stream into chunks of `size` bytes: rows and fields land across CopyData messages. */
function chunks(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

async function copyIn(client: pg.Client, sql: string, data: Buffer[]): Promise<void> {
  await pipeline(Readable.from(data), client.query(copyFrom(sql)));
}

async function refusal(client: pg.Client, sql: string, data: Buffer[]): Promise<{ code?: string; message: string }> {
  try {
    await copyIn(client, sql, data);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected the COPY to be refused');
}

const COPY_SQL = 'COPY customers (full_name, ssn, birth_date, external_id, phone, note) FROM STDIN (FORMAT binary)';

describe('binary COPY FROM STDIN', () => {
  it('protects the protected columns, stores plain ones as sent, and reads back plaintext', async () => {
    const rows = [
      [text('Olga Petrova'), text('123-45-6789'), date('1990-04-05'), uuid('0b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b'), text('+1 555 0100'), text('bincopy')],
      [text('Piotr Nowak'), null, null, null, null, text('bincopy')],
      [text('Quinn Ode'), text('987-65-4321'), date('1975-12-31'), uuid('1b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b'), text('+1 555 0101'), text('bincopy')],
    ];
    await copyIn(shared.app, COPY_SQL, chunks(binaryCopy(rows), 7));
    const stored = (await shared.direct.query("SELECT full_name, ssn, birth_date::text AS b, external_id::text AS u, phone FROM customers WHERE note = 'bincopy' ORDER BY id")).rows;
    expect(stored).toHaveLength(3);
    expect(stored.map((row) => row.full_name)).not.toContain('Olga Petrova');
    expect(stored[0].ssn).not.toBe('123-45-6789');
    expect(stored[0].b).not.toBe('1990-04-05');
    expect(stored[0].u).not.toBe('0b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b');
    expect(stored[0].phone).toBe('+1 555 0100');
    expect(stored[1]).toMatchObject({ ssn: null, b: null, u: null });
    const read = (await shared.app.query("SELECT full_name, ssn, birth_date::text AS b, external_id, phone FROM customers WHERE note = 'bincopy' ORDER BY id")).rows;
    expect(read[0]).toMatchObject({ full_name: 'Olga Petrova', ssn: '123-45-6789', external_id: '0b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b' });
    expect(read[2]).toMatchObject({ full_name: 'Quinn Ode', ssn: '987-65-4321' });
  });

  it('accepts a stream without the trailer, sent in one message', async () => {
    await copyIn(shared.app, 'COPY customers (ssn, note) FROM STDIN (FORMAT binary)', [binaryCopy([[text('222-33-4444'), text('bincopy-notrailer')]], false)]);
    const stored = (await shared.direct.query("SELECT ssn FROM customers WHERE note = 'bincopy-notrailer'")).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0].ssn).not.toBe('222-33-4444');
  });
});

describe('abuse: malformed binary COPY', () => {
  const cases: [string, Buffer[], string, RegExp][] = [
    ['a truncated field', [binaryCopy([[text('333-44-5555'), text('bincopy-bad')]]).subarray(0, 30)], '22P04', /ends inside row 1/],
    ['a wrong field count', [binaryCopy([[text('333-44-5555')]])], '22P04', /1 fields where 2 columns/],
    ['a garbage header', [Buffer.from('this is not a binary copy stream\n')], '22P04', /signature/],
    ['a value not of its kind', [binaryCopy([[text('not-an-ssn'), text('bincopy-bad')]])], '22P02', /customers\.ssn/],
    ['a field over proxy.maxProtectedValueBytes', [binaryCopy([[Buffer.alloc(5000, 0x31), text('bincopy-bad')]])], '54000', /maxProtectedValueBytes/],
  ];
  for (const [name, data, code, words] of cases) {
    it(`refuses ${name}, stores nothing, and the session goes on`, async () => {
      const error = await refusal(shared.app, 'COPY customers (ssn, note) FROM STDIN (FORMAT binary)', data);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(words);
      expect(error.message).not.toMatch(/333-44-5555|not-an-ssn/);
      expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'bincopy-bad'")).rows[0].n).toBe(0);
      expect((await shared.app.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    });
  }

  it('refuses binary COPY into a protected column inside a transaction, which then rolls back', async () => {
    await shared.app.query('BEGIN');
    await shared.app.query("INSERT INTO customers (note) VALUES ('bincopy-tx')");
    const error = await refusal(shared.app, 'COPY customers (ssn, note) FROM STDIN (FORMAT binary)', [Buffer.from('garbage')]);
    expect(error.code).toBe('22P04');
    await shared.app.query('ROLLBACK');
    expect((await shared.direct.query("SELECT count(*)::int AS n FROM customers WHERE note = 'bincopy-tx'")).rows[0].n).toBe(0);
  });
});

describe('binary COPY TO STDOUT', () => {
  async function copyOut(client: pg.Client, sql: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    await pipeline(client.query(copyTo(sql)), new Writable({ write(chunk: Buffer, _encoding, done) { chunks.push(chunk); done(); } }));
    return Buffer.concat(chunks);
  }

  /** The rows of a binary COPY stream (fields as bytes, null for NULL). */
  function rowsOf(stream: Buffer): (Buffer | null)[][] {
    expect(stream.subarray(0, SIGNATURE.length).equals(SIGNATURE)).toBe(true);
    let at = SIGNATURE.length + 8 + stream.readInt32BE(SIGNATURE.length + 4);
    const rows: (Buffer | null)[][] = [];
    for (;;) {
      const count = stream.readInt16BE(at);
      at += 2;
      if (count === -1) break;
      const row: (Buffer | null)[] = [];
      for (let i = 0; i < count; i++) {
        const length = stream.readInt32BE(at);
        at += 4;
        row.push(length === -1 ? null : stream.subarray(at, at + length));
        at += Math.max(length, 0);
      }
      rows.push(row);
    }
    expect(at).toBe(stream.length);
    return rows;
  }

  it('reveals protected columns to a plaintext role, field by field in their binary form', async () => {
    await copyIn(shared.app, 'COPY customers (ssn, birth_date, external_id, note) FROM STDIN (FORMAT binary)', [binaryCopy([
      [text('321-54-9876'), date('1982-07-08'), uuid('2b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b'), text('bincopy-out')],
      [null, null, null, text('bincopy-out')],
    ])]);
    const rows = rowsOf(await copyOut(shared.app, 'COPY customers (ssn, birth_date, external_id, note) TO STDOUT (FORMAT binary)'));
    const mine = rows.filter((row) => row[3]?.toString('utf8') === 'bincopy-out');
    expect(mine).toHaveLength(2);
    expect(mine[0]?.[0]?.toString('utf8')).toBe('321-54-9876');
    expect(mine[0]?.[1]).toEqual(date('1982-07-08'));
    expect(mine[0]?.[2]).toEqual(uuid('2b1c2d3e-4f50-4a61-8b72-0c9d8e7f6a5b'));
    expect(mine[1]?.slice(0, 3)).toEqual([null, null, null]);
  });

  it('masks text columns for a masking role, and refuses masked columns of other types, naming text and csv', async () => {
    const support = await shared.harness.connect(SUPPORT);
    const rows = rowsOf(await copyOut(support, 'COPY customers (ssn, note) TO STDOUT (FORMAT binary)'));
    const masked = rows.filter((row) => row[1]?.toString('utf8') === 'bincopy-out').map((row) => row[0]?.toString('utf8') ?? null);
    expect(masked).toContain('***-**-9876');
    expect(masked.join()).not.toMatch(/321-54/);
    const error = await copyOut(support, 'COPY customers (birth_date, note) TO STDOUT (FORMAT binary)').then(() => undefined, (caught: unknown) => caught as { code?: string; message: string });
    expect(error?.code).toBe('0A000');
    expect(error?.message).toMatch(/binary COPY TO.*birth_date.*FORMAT text or csv/);
    expect((await support.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    await support.end();
  });
});
