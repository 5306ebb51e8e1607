/**
 * The floor for a relay whose socket I/O is C inside Node's event loop (./nativePipe: recv/send on
 * uv_poll handles of Node's own loop). Two shapes, by PG_FRAMING:
 * - `native` (default): headers framed in C, no JavaScript per message: what a byte path all in C
 *   could reach before any message is handed to JavaScript;
 * - `javascript`: each chunk read is handed to JavaScript, which walks its message headers (types
 *   and lengths checked, headers split across chunks carried) and returns how much to forward, as a
 *   relay that kept its framing and hooks in JavaScript and moved only the socket I/O to C would.
 * Like nodePipeProcess.ts, pgbench's login passes through to PostgreSQL. PG_HOST/PG_PORT name the
 * server (PG_HOST an IPv4 address or the directory of its Unix-domain socket); prints `port=<n>`
 * once listening. Needs `npm run bench:native-pipe` first. A reference for the benchmark only.
 */
import { createRequire } from 'node:module';

interface NativePipe {
  start(host: string, port: number, onChunk?: (pair: number, direction: number, length: number) => number): number;
  readBuffer(): Buffer;
}

/** Where one direction of one connection stands between chunks. */
interface Framing {
  /** The first client message (the startup packet) has no type byte. */
  startup: boolean;
  /** Bytes of the current message still to pass. */
  remaining: number;
  /** A header split across chunks: its bytes so far. */
  header: Buffer;
  headerSeen: number;
}

/** Largest message length accepted, the same for every type here (the C framer's bound too). */
const MAX_MESSAGE = 1 << 30;

function walkChunk(framing: Framing, chunk: Buffer, length: number): boolean {
  let pos = 0;
  while (pos < length) {
    if (framing.remaining > 0) {
      const take = Math.min(framing.remaining, length - pos);
      framing.remaining -= take;
      pos += take;
      continue;
    }
    const headerBytes = framing.startup ? 4 : 5;
    if (framing.headerSeen === 0 && length - pos >= headerBytes) {
      const messageLength = chunk.readInt32BE(pos + headerBytes - 4);
      if (messageLength < 4 || messageLength > MAX_MESSAGE) return false;
      framing.startup = false;
      framing.remaining = messageLength - 4;
      pos += headerBytes;
      continue;
    }
    const take = Math.min(headerBytes - framing.headerSeen, length - pos);
    chunk.copy(framing.header, framing.headerSeen, pos, pos + take);
    framing.headerSeen += take;
    pos += take;
    if (framing.headerSeen < headerBytes) continue;
    const messageLength = framing.header.readInt32BE(headerBytes - 4);
    if (messageLength < 4 || messageLength > MAX_MESSAGE) return false;
    framing.headerSeen = 0;
    framing.startup = false;
    framing.remaining = messageLength - 4;
  }
  return true;
}

// This script runs from dist/bench/proxy/; the addon is built in bench/proxy/nativePipe/.
const addon = createRequire(import.meta.url)('../../../bench/proxy/nativePipe/build/Release/native_pipe.node') as NativePipe;
const host = process.env.PG_HOST ?? '127.0.0.1';
const upstreamPort = Number(process.env.PG_PORT);
let port: number;
if (process.env.PG_FRAMING === 'javascript') {
  const chunk = addon.readBuffer();
  const framings: Framing[] = [];
  port = addon.start(host, upstreamPort, (pair, direction, length) => {
    const key = pair * 2 + direction;
    const framing = framings[key] ??= { startup: direction === 0, remaining: 0, header: Buffer.alloc(5), headerSeen: 0 };
    return walkChunk(framing, chunk, length) ? length : -1;
  });
} else {
  port = addon.start(host, upstreamPort);
}
process.stdout.write(`port=${port}\n`);
process.on('SIGTERM', () => process.exit(0));
