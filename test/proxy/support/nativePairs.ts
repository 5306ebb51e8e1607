/**
 * Connected socket pairs whose accepted end is handed to the native addon, as a session's sockets
 * are after the login, and helpers that read and write them (the native socket tests share them).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handOverSocket } from '../../../src/proxy/nativeSockets/socketHandOver.js';
import type { RelaySocket } from '../../../src/proxy/session/relaySocket.js';
import { readWithReusedBuffer } from '../../../src/proxy/reusedReadBuffer.js';

export const servers: net.Server[] = [];
export const folders: string[] = [];

/** Closes the servers and removes the folders the pairs made: each test file's afterEach. */
export async function closePairs(): Promise<void> {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
}

export interface Pair {
  /** Our end, handed over (or not) as `handOverSocket` decided. */
  ours: RelaySocket;
  native: boolean;
  /** What Node had read before the hand-over. */
  bytes: Buffer;
  /** The peer: an ordinary Node socket. */
  peer: net.Socket;
}

/**
 * A connected pair whose accepted end is handed over; `beforeHandOver` runs with both ends
 * connected and Node's end paused (as the relay's sockets are after the login).
 */
export async function pair(options: { unix?: boolean; beforeHandOver?: (accepted: net.Socket, peer: net.Socket) => Promise<void> } = {}): Promise<Pair> {
  let acceptedResolve: (socket: net.Socket) => void = () => undefined;
  const accepted = new Promise<net.Socket>((resolve) => { acceptedResolve = resolve; });
  const server = net.createServer({ pauseOnConnect: true }, (socket) => acceptedResolve(readWithReusedBuffer(socket).socket));
  servers.push(server);
  let address: string | number;
  if (options.unix) {
    const folder = mkdtempSync(join(tmpdir(), 'pgveil-native-'));
    folders.push(folder);
    address = join(folder, 'socket');
    await new Promise<void>((resolve) => server.listen(address as string, resolve));
  } else {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = (server.address() as net.AddressInfo).port;
  }
  const peer = await new Promise<net.Socket>((resolve, reject) => {
    const socket = typeof address === 'string' ? net.connect(address) : net.connect({ host: '127.0.0.1', port: address, noDelay: true });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
  const socket = await accepted;
  socket.pause();
  await options.beforeHandOver?.(socket, peer);
  const handed = handOverSocket(socket);
  if (handed === null) return { ours: socket, native: false, bytes: Buffer.alloc(0), peer };
  return { ours: handed.socket, native: true, bytes: Buffer.concat(handed.held), peer };
}

export function collect(socket: RelaySocket | net.Socket, until: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= until) {
        socket.off('data', onData);
        resolve(Buffer.concat(chunks));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.resume();
  });
}

/** Writes `bytes` in pieces of random sizes, waiting for 'drain' whenever a write says to. */
export async function writeInPieces(socket: RelaySocket | net.Socket, bytes: Buffer, largest: number): Promise<number> {
  let waits = 0;
  for (let at = 0; at < bytes.length;) {
    const size = 1 + Math.floor(Math.random() * largest);
    const ok = socket.write(bytes.subarray(at, at + size));
    at += size;
    if (!ok) {
      waits++;
      await new Promise<void>((resolve) => socket.once('drain', () => resolve()));
    }
  }
  return waits;
}

export const digest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
