import { expect, it } from 'vitest';
import { asPrimaryMessage, asWorkerMessage, cancelMessage, loginCountedMessage } from '../../src/cli/workerMessages.js';

it('passes counted logins and cancels between primary and workers, and ignores anything malformed', () => {
  const login = loginCountedMessage({ outcome: 'failure', account: 'ops@example.com', client: '127.0.0.1' });
  // What crosses node:cluster IPC is JSON.
  const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
  expect(asWorkerMessage(wire(login))).toEqual(login);
  expect(asPrimaryMessage(wire(login))).toEqual(login);
  expect(asPrimaryMessage(wire(loginCountedMessage({ outcome: 'success', account: 'a' })))).toMatchObject({ kind: 'pgveil.login' });
  const cancel = cancelMessage(1, 42, Buffer.from([1, 2, 3, 4]));
  expect(asWorkerMessage(wire(cancel))).toEqual(cancel);
  for (const bad of [
    { kind: 'pgveil.login' },
    { kind: 'pgveil.login', login: { outcome: 'maybe', account: 'a' } },
    { kind: 'pgveil.login', login: { outcome: 'failure', account: 7 } },
    { kind: 'pgveil.login', login: { outcome: 'failure', account: 'a', client: 7 } },
    { kind: 'pgveil.login', login: { outcome: 'failure', account: 'a'.repeat(2000) } },
    { kind: 'pgveil.cancel', workerSlot: 1 },
    null, 'pgveil.reload', { kind: 'other' },
  ]) {
    expect(asWorkerMessage(bad)).toBeUndefined();
    expect(asPrimaryMessage(bad)).toBeUndefined();
  }
});
