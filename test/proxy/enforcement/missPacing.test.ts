/** One session's catalog misses: a burst at once, then one reading per interval. */
import { describe, expect, it } from 'vitest';
import { SessionMissPacing } from '../../../src/proxy/enforcement/catalog/missPacing.js';

describe('SessionMissPacing', () => {
  it('lets a burst through at once, then spaces the misses by the interval', () => {
    const pacing = new SessionMissPacing(3, 1_000);
    expect([0, 0, 0].map(() => pacing.delayFor(10_000))).toEqual([0, 0, 0]);
    expect(pacing.delayFor(10_000)).toBe(1_000);
    expect(pacing.delayFor(10_000)).toBe(2_000);
  });

  it('earns its burst back while the session names nothing new', () => {
    const pacing = new SessionMissPacing(3, 1_000);
    for (let i = 0; i < 5; i++) pacing.delayFor(0);
    expect(pacing.delayFor(1_000)).toBeGreaterThan(0);
    expect(pacing.delayFor(60_000)).toBe(0);
    expect(pacing.delayFor(60_000)).toBe(0);
  });
});
