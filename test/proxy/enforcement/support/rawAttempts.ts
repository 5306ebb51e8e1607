/**
 * Raw-frame attempts by a limited account, for the attack suites: each runs in its own session,
 * and whatever it read must hold no plaintext phone, and no plaintext SSN may be stored in a
 * protected column.
 */
import { serialize } from 'pg-protocol';
import { expect } from 'vitest';
import { openRawSession, type BackendMessage, type RawSession } from '../../support/rawProtocol.js';
import type { DirectHarness, TestAccount } from './policyHarness.js';

export const ATTACK_SSN = '123-45-6789';
export const ATTACK_PHONE = '+1 555 010 4477';

/** Each message as its type and its body read as Latin-1, one per line. */
export const messageTexts = (messages: BackendMessage[]): string => messages.map((m) => `${m.type} ${m.body.toString('latin1')}\n`).join('');

/** How many rows hold the plaintext SSN in a protected column. */
export async function storedPlaintextSsn(h: DirectHarness): Promise<number> {
  const stored = await h.direct.query<{ n: number }>('SELECT count(*)::int AS n FROM customers WHERE ssn = $1 OR full_name = $1 OR email = $1', [ATTACK_SSN]);
  return stored.rows[0]?.n ?? 0;
}

/** Runs `run` as `account` in a raw session, then checks what it read and what was stored. */
export async function attempt(h: DirectHarness, account: TestAccount, run: (session: RawSession) => Promise<string>): Promise<string> {
  const session = await openRawSession(h.harness.via(account));
  let seen = '';
  try {
    seen = await run(session);
  } finally {
    session.close();
  }
  expect.soft(seen).not.toContain(ATTACK_PHONE);
  expect.soft(await storedPlaintextSsn(h)).toBe(0);
  return seen;
}

/** A simple Query and everything up to its ReadyForQuery. */
export async function simple(session: RawSession, sql: string): Promise<string> {
  session.send(serialize.query(sql));
  return messageTexts(await session.readUntilReady());
}
