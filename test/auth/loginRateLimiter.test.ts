import { expect, it } from 'vitest';
import { LoginRateLimiter, type CountedLogin } from '../../src/auth/loginRateLimiter.js';

it('limits per (account, address) and per address, never an account for everyone', () => {
  let now = 0;
  const limiter = new LoginRateLimiter({ maxFailuresPerAccount: 2, maxFailuresPerClient: 3, windowSeconds: 10 }, () => now);
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: false });
  now = 4000;
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: true, retryAfterSeconds: 10 });
  // The same account from elsewhere is not locked: guesses cannot lock its owner out.
  expect(limiter.check('a', '2.2.2.2')).toEqual({ limited: false });
  // One address trying many accounts (spraying) hits its own cap.
  limiter.recordFailure('b', '1.1.1.1');
  expect(limiter.check('c', '1.1.1.1')).toMatchObject({ limited: true });
  expect(limiter.check('c', '3.3.3.3')).toEqual({ limited: false });
  now = 14_000;
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: false });
});

it('backs off: each new lock of the same account and address lasts twice the one before', () => {
  let now = 0;
  const limiter = new LoginRateLimiter({ maxFailuresPerAccount: 1, maxFailuresPerClient: 1000, windowSeconds: 10 }, () => now);
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: true, retryAfterSeconds: 10 });
  now = 10_000;
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: false });
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: true, retryAfterSeconds: 20 });
  now = 30_000;
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: true, retryAfterSeconds: 40 });
});

it('clears the account count on success', () => {
  const limiter = new LoginRateLimiter({ maxFailuresPerAccount: 1, maxFailuresPerClient: 100, windowSeconds: 10 }, () => 0);
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1').limited).toBe(true);
  limiter.recordSuccess('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1').limited).toBe(false);
});

it('shares counts between the processes of one instance, without echoing a shared count back', () => {
  const settings = { maxFailuresPerAccount: 3, maxFailuresPerClient: 100, windowSeconds: 10 };
  const [a, b] = [new LoginRateLimiter(settings, () => 0), new LoginRateLimiter(settings, () => 0)];
  const sentByA: CountedLogin[] = [];
  const sentByB: CountedLogin[] = [];
  a.onCounted((login) => { sentByA.push(login); b.applyShared(login); });
  b.onCounted((login) => { sentByB.push(login); a.applyShared(login); });
  a.recordFailure('x', '1.1.1.1');
  b.recordFailure('x', '1.1.1.1');
  expect(a.check('x', '1.1.1.1').limited).toBe(false);
  a.recordFailure('x', '1.1.1.1');
  // Three in all, counted on two limiters: both are locked.
  expect(a.check('x', '1.1.1.1').limited).toBe(true);
  expect(b.check('x', '1.1.1.1').limited).toBe(true);
  expect(sentByA).toEqual([{ outcome: 'failure', account: 'x', client: '1.1.1.1' }, { outcome: 'failure', account: 'x', client: '1.1.1.1' }]);
  expect(sentByB).toHaveLength(1);
  // A success on one clears the account's count on the other.
  const [c, d] = [new LoginRateLimiter(settings, () => 0), new LoginRateLimiter(settings, () => 0)];
  c.onCounted((login) => d.applyShared(login));
  for (let i = 0; i < 2; i++) c.recordFailure('y', '2.2.2.2');
  c.recordSuccess('y', '2.2.2.2');
  d.recordFailure('y', '2.2.2.2');
  expect(d.check('y', '2.2.2.2').limited).toBe(false);
});
