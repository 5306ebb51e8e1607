import { expect, it } from 'vitest';
import { LoginRateLimiter } from '../../src/auth/loginRateLimiter.js';

it('limits per account and per client in fixed windows', () => {
  let now = 0;
  const limiter = new LoginRateLimiter({ maxFailuresPerAccount: 2, maxFailuresPerClient: 3, windowSeconds: 10 }, () => now);
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: false });
  now = 4000;
  limiter.recordFailure('a', '1.1.1.1');
  expect(limiter.check('a', '2.2.2.2')).toEqual({ limited: true, retryAfterSeconds: 6 });
  limiter.recordFailure('b', '1.1.1.1');
  expect(limiter.check('c', '1.1.1.1')).toMatchObject({ limited: true });
  expect(limiter.check('c', '3.3.3.3')).toEqual({ limited: false });
  now = 10_000;
  expect(limiter.check('a', '1.1.1.1')).toEqual({ limited: false });
});

it('clears the account count on success', () => {
  const limiter = new LoginRateLimiter({ maxFailuresPerAccount: 1, maxFailuresPerClient: 100, windowSeconds: 10 }, () => 0);
  limiter.recordFailure('a');
  expect(limiter.check('a').limited).toBe(true);
  limiter.recordSuccess('a');
  expect(limiter.check('a').limited).toBe(false);
});
