/**
 * Streams one large simple-query result through the proxy with a minimal client that counts rows
 * without keeping them, while sampling the proxy's RSS.
 */
import net from 'node:net';
import { serialize } from 'pg-protocol';

export interface StreamTarget {
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface StreamResult {
  rows: number;
  bytes: number;
  seconds: number;
  maxRssMiB: number;
}

export async function streamLargeResult(target: StreamTarget, rows: number, sampleRssMiB: () => number): Promise<StreamResult> {
  const socket = net.connect({ host: '127.0.0.1', port: target.port });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(serialize.startup({ user: target.user, database: target.database }));
  let pending: Buffer = Buffer.alloc(0);
  let dataRows = 0;
  let bytes = 0;
  let readyCount = 0;
  let started = 0;
  let maxRss = 0;
  const sampler = setInterval(() => {
    maxRss = Math.max(maxRss, sampleRssMiB());
  }, 100);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('close', () => reject(new Error('connection closed before the result ended')));
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        let pos = 0;
        while (pending.length - pos >= 5) {
          const total = 1 + pending.readInt32BE(pos + 1);
          if (pending.length - pos < total) break;
          const type = pending[pos];
          if (type === 0x44) dataRows++;
          else if (type === 0x52 && pending.readInt32BE(pos + 5) === 3) socket.write(serialize.password(target.password));
          else if (type === 0x45) reject(new Error(pending.toString('utf8', pos + 5, pos + total)));
          else if (type === 0x5a && ++readyCount === 1) {
            started = Date.now();
            socket.write(serialize.query(`SELECT i, repeat('x', 40) AS filler FROM generate_series(1, ${rows}) i`));
          } else if (type === 0x5a) {
            resolve();
          }
          pos += total;
        }
        pending = pending.subarray(pos);
      });
    });
  } finally {
    clearInterval(sampler);
    socket.removeAllListeners('close');
    socket.end(serialize.end());
  }
  return { rows: dataRows, bytes, seconds: (Date.now() - started) / 1000, maxRssMiB: Math.max(maxRss, sampleRssMiB()) };
}
