/**
 * Column-policy hooks over a fixed catalog whose policy file a test can reload, and a session of
 * them fed message by message (no sockets): for tests of what a reload or DDL changes mid-session.
 */
import { randomBytes } from 'node:crypto';
import { serialize } from 'pg-protocol';
import pino from 'pino';
import { afterEach } from 'vitest';
import { createEngine } from '../../../../src/engine/index.js';
import { parsePolicies, type PolicySet } from '../../../../src/policy/index.js';
import type { CatalogRelation, CatalogSnapshot } from '../../../../src/proxy/enforcement/catalog/catalogSnapshot.js';
import { createPolicyHooks, type PolicyHooks } from '../../../../src/proxy/enforcement/index.js';
import { commandCompleteMessage, readyForQuery, typedMessage } from '../../../../src/proxy/protocol/messages.js';
import { ProtocolState } from '../../../../src/proxy/session/protocolState.js';
import type { MessageVerdict, SessionContext, SessionHooks } from '../../../../src/proxy/session/sessionHooks.js';
import { snapshotOf } from './catalogFixtures.js';
import { deliverBackend, deliverFrontend } from './hookRouting.js';

export const engine = createEngine({ masterKey: randomBytes(32) });

export interface Harness {
  readonly hooks: PolicyHooks;
  relations: CatalogRelation[];
  reload(policies: string): void;
}

let open: PolicyHooks | undefined;
afterEach(() => open?.close());

/** `policies`: the policy file's text at the start. */
export async function harness(relations: CatalogRelation[], policies: string): Promise<Harness> {
  let current: PolicySet = parsePolicies(policies, 'policies.yaml');
  const listeners: ((set: PolicySet) => void)[] = [];
  const state = { relations };
  const snapshot = (): CatalogSnapshot => snapshotOf(state.relations, { currentUser: 'pgveil', defaultSearchPath: '"$user", public' });
  const hooks = await createPolicyHooks({
    policies: { get current() { return current; }, onChange: (listener) => { listeners.push(listener); return () => undefined; } },
    engine,
    upstream: { host: '127.0.0.1', port: 1, user: 'pgveil', sslmode: 'disable' },
    logger: pino({ level: 'silent' }),
    catalogLoader: async () => snapshot(),
  });
  open = hooks;
  return {
    hooks,
    get relations() { return state.relations; },
    set relations(next) { state.relations = next; },
    reload(text) {
      current = parsePolicies(text, 'policies.yaml');
      for (const listener of listeners) listener(current);
    },
  };
}

export interface FakeSession {
  readonly hooks: SessionHooks;
  readonly context: SessionContext;
  readonly state: ProtocolState<unknown>;
}

export function session(h: Harness, roles: string[]): FakeSession {
  const state = new ProtocolState<unknown>();
  const context: SessionContext = {
    account: { email: `${roles.join('-')}@example.com`, roles },
    clientDatabase: 'app', upstreamDatabase: 'app', upstreamUser: 'pgveil',
    serverParameters: new Map([['DateStyle', 'ISO, MDY'], ['client_encoding', 'UTF8']]),
    state, replies: state, replyInOrder: () => undefined, discardUntilSync: () => undefined, end: () => undefined,
  };
  return { hooks: h.hooks.factory(context), context, state };
}

/** The hook's verdict as it came: a promise when the message had to wait. */
export function frontNow(s: FakeSession, frame: Buffer): MessageVerdict | Promise<MessageVerdict> {
  return s.hooks.onFrontendMessage(frame, s.context);
}

export async function front(s: FakeSession, frame: Buffer): Promise<Buffer | undefined> {
  return deliverFrontend(s.hooks, s.context, s.state, frame);
}

export async function back(s: FakeSession, frame: Buffer): Promise<void> {
  await deliverBackend(s.hooks, s.context, s.state, frame);
}

/** A Query the server completes with `tag`, then ReadyForQuery. */
export async function completed(s: FakeSession, sql: string, tag: string): Promise<Buffer | undefined> {
  const verdict = await front(s, serialize.query(sql));
  await back(s, commandCompleteMessage(tag));
  await back(s, readyForQuery('I'));
  return verdict;
}

/**
 * After a first plain Query (the catalog is loaded), prepares `sql` as statement `name` and has the
 * server confirm it; `deliver` hands the client's messages on (default: `front`).
 */
export async function prepared(
  s: FakeSession, name: string, sql: string, deliver: (frame: Buffer) => Promise<MessageVerdict> = (frame) => front(s, frame),
): Promise<void> {
  await completed(s, 'SELECT 1', 'SELECT 1');
  await deliver(serialize.parse({ name, text: sql, types: [] }));
  await deliver(serialize.sync());
  await back(s, typedMessage('1', Buffer.alloc(0)));
  await back(s, readyForQuery('I'));
}

/** What the client gets for these server messages: each hook's verdict, or the message itself. */
export async function sentToClient(s: FakeSession, frames: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  for (const frame of frames) out.push((await deliverBackend(s.hooks, s.context, s.state, frame)) ?? frame);
  return Buffer.concat(out);
}
