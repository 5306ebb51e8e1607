/**
 * Hands a logged-in session's plaintext socket from Node to the native addon. Node's socket must
 * be idle: nothing waiting to be written, not reading (its handle is stopped here), no 'data'
 * listener. What Node had read but not delivered is taken from it first; then the addon
 * duplicates the descriptor and Node's socket is destroyed, which closes only Node's descriptor:
 * the connection stays open, owned by the addon alone. When anything is not as expected the
 * socket stays Node's (the stream path), untouched.
 *
 * Leans on one private part of Node's lib/net.js, checked before use: `socket._handle`, the
 * native TCP or pipe handle, with its `fd` and `readStop()` (test/proxy/nativeSockets.test.ts
 * checks it on every Node version the tests run on).
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
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
  socket: NativeSocket;
  /** What Node had read and not delivered, to be relayed before anything the addon reads. */
  held: Buffer[];
}

/** `socket` handed to the addon, or null when it stays Node's (no addon, TLS, not idle, not a plain socket). */
export function handOverSocket(socket: Duplex, addon: SocketAddon | null = socketAddon ?? null): HandedOver | null {
  if (addon === null || !(socket instanceof net.Socket) || socket instanceof tls.TLSSocket) return null;
  if (socket.destroyed || socket.connecting || !socket.writable || socket.writableLength > 0 || socket.readableEnded
    || socket.listenerCount('data') > 0) return null;
  const handle = idleHandle(socket);
  if (handle === null) return null;
  handle.readStop();
  let native: NativeSocket;
  try {
    native = new NativeSocket(addon, handle.fd);
  } catch {
    return null; // the stream path restarts reading when the relay resumes the socket
  }
  // read() may ask the handle to read again; nothing is read before Node's socket is closed below, within this call.
  const held: Buffer[] = [];
  for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) held.push(chunk);
  socket.destroy();
  return { socket: native, held };
}
