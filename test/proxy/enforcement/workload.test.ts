/**
 * A mixed workload through the proxy (parameters text and binary, literals, multi-row and
 * multi-statement queries, upserts, updates, COPY text and CSV, concurrent sessions), then a
 * direct scan: no protected column holds any plaintext that was written.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { APP, startPolicyHarness, type PolicyHarness } from './support/policyHarness.js';

let harness: PolicyHarness;

beforeAll(async () => {
  harness = await startPolicyHarness();
});

afterAll(async () => {
  await harness?.stop();
});

interface Person {
  name: string;
  email: string;
  ssn: string;
  card: string;
  birth: string;
  ip: string;
}

function person(worker: number, i: number): Person {
  const n = worker * 1000 + i;
  const digits = String(100_000_000 + n * 7919).slice(-9);
  return {
    name: `Person${String.fromCharCode(65 + (n % 26))} Worker${String.fromCharCode(65 + worker)}`,
    email: `p${n}@mail${worker}.example.com`,
    ssn: `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}`.replace(/^000/, '100').replace(/^666/, '667').replace(/^9/, '8'),
    card: `4000${String(100_000_000_000 + n).slice(-11)}`.padEnd(15, '0'),
    birth: `19${50 + (n % 40)}-0${1 + (n % 9)}-1${n % 9}`,
    ip: `10.${worker}.${Math.floor(i / 200)}.${(i % 200) + 1}`,
  };
}

async function runWorker(client: pg.Client, worker: number, written: Person[]): Promise<void> {
  for (let i = 0; i < 24; i++) {
    const p = person(worker, i);
    written.push(p);
    switch (i % 6) {
      case 0:
        await client.query('INSERT INTO customers (full_name, email, ssn, birth_date, ip_address) VALUES ($1, $2, $3, $4, $5)', [p.name, p.email, p.ssn, p.birth, p.ip]);
        break;
      case 1:
        await client.query(`INSERT INTO customers (full_name, email, ssn) VALUES ('${p.name}', '${p.email}', '${p.ssn}'); SELECT 1`);
        break;
      case 2:
        await client.query({ text: 'INSERT INTO customers (full_name, email, ssn) VALUES ($1, $2, $3) ON CONFLICT (email) DO UPDATE SET ssn = EXCLUDED.ssn', values: [Buffer.from(p.name), Buffer.from(p.email), Buffer.from(p.ssn)] });
        break;
      case 3:
        await client.query('INSERT INTO customers (email) VALUES ($1)', [p.email]);
        await client.query('UPDATE customers SET full_name = $1, ssn = $2, birth_date = $3 WHERE email = $4', [p.name, p.ssn, p.birth, p.email]);
        break;
      case 4:
        await pipeline(Readable.from([`${p.name}\t${p.email}\t${p.ssn}\t${p.ip}\n`]), client.query(copyFrom('COPY customers (full_name, email, ssn, ip_address) FROM STDIN')));
        break;
      default:
        await pipeline(Readable.from([`"${p.name}",${p.email},${p.ssn}\n`]), client.query(copyFrom('COPY customers (full_name, email, ssn) FROM STDIN (FORMAT csv)')));
    }
  }
}

it('stores no plaintext that was written, and reads it all back as plaintext for app', async () => {
  const clients = await Promise.all([0, 1, 2].map(() => harness.connect(APP)));
  const written: Person[] = [];
  await Promise.all(clients.map((client, worker) => runWorker(client, worker, written)));
  const direct = await harness.direct();
  const stored = (await direct.query('SELECT full_name, email, ssn, birth_date::text AS birth, host(ip_address) AS ip FROM customers')).rows as Record<string, string | null>[];
  expect(stored.length).toBe(written.length);
  const plaintexts = new Set(written.flatMap((p) => [p.name, p.email, p.ssn, p.birth, p.ip]));
  for (const row of stored) for (const value of Object.values(row)) if (value !== null) expect(plaintexts.has(value)).toBe(false);
  const app = clients[0] as pg.Client;
  const revealed = (await app.query('SELECT email, ssn FROM customers')).rows as { email: string; ssn: string }[];
  const byEmail = new Map(revealed.map((row) => [row.email, row.ssn]));
  for (const p of written) expect(byEmail.get(p.email)).toBe(p.ssn);
  await direct.end();
  for (const client of clients) await client.end();
});
