/**
 * Hands a logged-in session's plaintext socket from Node to the native addon. Node's socket must
 * be idle: nothing waiting to be written, not reading (its handle is stopped here), no 'data'
 * listener. What Node had read but not delivered is taken from it first; then the addon
 * duplicates the descriptor and Node's socket is destroyed, which closes only Node's descriptor:
 * the connection stays open, owned by the addon alone. When anything is not as expected the
 * socket stays Node's (the stream path), untouched.
 *
 * Leans on one private part of Node's lib/net.js, checked before use: `socket._handle`, the
 * native TCP or pipe handle, with its `fd` and `readStop()` (test/proxy/nativeSockets checks
 * it on every Node version the tests run on).
 */
import net from 'node:net';
import tls from 'node:tls';
import type { RelaySocket } from '../session/relaySocket.js';
import { NativeSocket } from './nativeSocket.js';
import { socketAddon, type SocketAddon } from './socketAddon.js';

interface StreamHandleInternals {
  fd: number;
  readStop(): number;
}

function idleHandle(socket: net.Socket): StreamHandleInternals | null {
  const handle = (socket as unknown as { _handle: unknown })._handle;
  if (typeof handle !== 'object' || handle === null) return null;
  const candidate = handle as Partial<Record<keyof StreamHandleInternals, unknown>>;
  if (typeof candidate.fd !== 'number' || candidate.fd < 0 || typeof candidate.readStop !== 'function') return null;
  return handle as StreamHandleInternals;
}

export interface HandedOver {
  socket: RelaySocket;
  /** Bytes already read from the socket, to be relayed first. */
  bytes: Buffer;
  native: boolean;
}

/**
 * The socket to relay `socket` on, and the bytes already read from it (`readSoFar`, then what
 * Node still held): a NativeSocket when the addon is there and the socket can be handed over,
 * else `socket` itself.
 */
export function handOverSocket(socket: RelaySocket, readSoFar: Buffer, addon: SocketAddon | null = socketAddon.addon ?? null): HandedOver {
  const unchanged: HandedOver = { socket, bytes: readSoFar, native: false };
  if (addon === null || !(socket instanceof net.Socket) || socket instanceof tls.TLSSocket) return unchanged;
  if (socket.destroyed || socket.connecting || !socket.writable || socket.writableLength > 0 || socket.readableEnded
    || socket.listenerCount('data') > 0) return unchanged;
  const handle = idleHandle(socket);
  if (handle === null) return unchanged;
  handle.readStop();
  let native: NativeSocket;
  try {
    native = new NativeSocket(addon, handle.fd);
  } catch {
    return unchanged; // the stream path restarts reading when the relay resumes the socket
  }
  // Read by Node before the hand-over and not delivered: it comes first. (read() may ask the handle
  // to read again; nothing is read before Node's socket is closed below, within this call.)
  const held: Buffer[] = [readSoFar];
  for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) held.push(chunk);
  socket.destroy();
  return { socket: native, bytes: held.length === 1 ? readSoFar : Buffer.concat(held), native: true };
}
