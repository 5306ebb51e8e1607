import { Writable } from 'node:stream';
import pino from 'pino';
import { expect, it } from 'vitest';
import { WarningThrottle } from '../../src/proxy/session/warningThrottle.js';

function capture(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  }));
  return { logger, lines };
}

it('writes at most perInterval warnings per interval, then one line counting the rest', async () => {
  let now = 0;
  const { logger, lines } = capture();
  const throttle = new WarningThrottle(logger, 3, 1000, () => now);
  for (let i = 0; i < 1000; i++) throttle.warn({ type: 'x' }, 'proxy: invalid frontend message type');
  now = 1500;
  throttle.warn({ type: 'y' }, 'proxy: invalid frontend message type');
  await new Promise((resolve) => setImmediate(resolve));
  expect(lines.map((line) => line['msg'])).toEqual([
    'proxy: invalid frontend message type', 'proxy: invalid frontend message type', 'proxy: invalid frontend message type',
    'proxy: similar warnings were suppressed', 'proxy: invalid frontend message type',
  ]);
  expect(lines[3]).toMatchObject({ suppressed: 997 });
  expect(lines.every((line) => line['stack'] === undefined && line['err'] === undefined)).toBe(true);
});
