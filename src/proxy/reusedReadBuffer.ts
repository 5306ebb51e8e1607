/**
 * Reads an accepted client socket into one reused buffer, as the upstream socket is read
 * (`onread`). Node's stream path allocates a fresh 64 KiB buffer for every read, then shrinks it
 * to the bytes read; at one read per transaction that allocation is a large part of the relay's
 * CPU. `net.Server` has no `onread` option, so the accepted socket's handle, still idle
 * (`pauseOnConnect`), is moved to a new net.Socket that has one: the way Node's own
 * `onconnection` builds the accepted socket (`new Socket({ handle })`).
 *
 * This leans on two private parts of Node's lib/net.js, checked here before use and by
 * test/proxy/reusedReadBuffer.test.ts on every Node version the tests run on:
 * - `socket._handle`, the native TCP handle, and the `handle` option of the net.Socket constructor;
 * - `server._connections`, counted by the accepted socket: it is destroyed once the new socket has
 *   closed, with its `_handle` taken away first, so that it only counts down (server.close() and
 *   maxConnections keep working) and can never close or read the handle the new socket owns.
 * When anything is not as expected, the accepted socket is used as it is (the stream path).
 *
 * Each read is copied out of the reused buffer (into Node's pool for small reads): the pump keeps
 * references to chunks (partial frames, a backlog while a hook works). The copy goes to the
 * socket's readers as the Readable would hand it over (see `deliver`): what arrives while nobody
 * reads is kept, in order, and reading stops past the high-water mark, as on the stream path.
 * TLS (after an SSLRequest) wraps the new socket as any other: the TLS layer then takes the
 * handle's reads itself and this buffer goes unused.
 */
import net from 'node:net';
import { Readable } from 'node:stream';

const READ_BUFFER_BYTES = 64 * 1024;

/** The part of a native stream handle (TCPWrap) the move relies on. */
interface StreamHandle {
  readStart(): number;
  readStop(): number;
  useUserBuffer(buffer: Uint8Array): void;
  reading: boolean;
}

/** Node's private fields of net.Socket this reads or clears. */
interface SocketInternals {
  _handle: unknown;
}

/** The net.Socket constructor's private `handle` option, which Node's own accept uses, and `onread` (typed for connect only). */
interface SocketOptionsWithHandle extends net.SocketConstructorOpts {
  handle: StreamHandle;
  onread: net.OnReadOpts;
}

export interface AcceptedClientSocket {
  socket: net.Socket;
  /** False: the accepted socket itself, read on the stream path. */
  reusesReadBuffer: boolean;
}

/**
 * Hands a copy of what the read filled to the socket's readers (the buffer is read into again
 * next time). When the Readable would emit it at once (flowing, nothing buffered before it, a
 * 'data' listener), it is emitted directly, without the Readable's per-chunk work; otherwise it is
 * pushed, to be kept in order until read. False stops the reads (the Readable is full).
 */
function deliver(socket: net.Socket, readBuffer: Buffer, bytes: number): boolean {
  const chunk = Buffer.allocUnsafe(bytes);
  readBuffer.copy(chunk, 0, 0, bytes);
  if (socket.readableFlowing === true && socket.readableLength === 0 && socket.listenerCount('data') > 0) {
    socket.emit('data', chunk);
    return true;
  }
  return socket.push(chunk);
}

function pauseFlowOnly(this: net.Socket): net.Socket {
  Readable.prototype.pause.call(this);
  return this;
}

function isIdleStreamHandle(handle: unknown): handle is StreamHandle {
  if (typeof handle !== 'object' || handle === null) return false;
  const candidate = handle as Partial<Record<keyof StreamHandle, unknown>>;
  return typeof candidate.readStart === 'function'
    && typeof candidate.readStop === 'function'
    && typeof candidate.useUserBuffer === 'function'
    && candidate.reading === false;
}

/**
 * The socket to serve `accepted` on: a new one reading into one reused buffer, or `accepted`
 * itself. `accepted` must come from a server with `pauseOnConnect` (its handle not yet read).
 */
export function readWithReusedBuffer(accepted: net.Socket, readBuffer: Buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES)): AcceptedClientSocket {
  const internals = accepted as unknown as SocketInternals;
  const handle = internals._handle;
  const untouched = !accepted.destroyed && accepted.readableFlowing === false && accepted.readableLength === 0 && accepted.bytesRead === 0;
  if (!untouched || !isIdleStreamHandle(handle)) return { socket: accepted, reusesReadBuffer: false };

  let socket: net.Socket | undefined;
  const options: SocketOptionsWithHandle = {
    handle,
    allowHalfOpen: accepted.allowHalfOpen,
    readable: true,
    writable: true,
    onread: { buffer: readBuffer, callback: (bytes: number): boolean => deliver(socket as net.Socket, readBuffer, bytes) },
  };
  try {
    socket = new net.Socket(options);
  } catch {
    // Whether the handle was already handed over is unknown: serve nothing rather than read it twice.
    accepted.destroy();
    throw new Error('net.Socket refused an accepted handle');
  }
  if ((socket as unknown as SocketInternals)._handle !== handle) {
    // The handle option was ignored (so the handle was left alone): the stream path, as accepted.
    socket.destroy();
    return { socket: accepted, reusesReadBuffer: false };
  }
  internals._handle = null;
  socket.once('close', () => accepted.destroy());
  // With onread, net.Socket's pause() stops the handle's reads; on the stream path it only stops
  // the flow of 'data' and the reads go on until the Readable is full. Kept so: a session paused
  // while a hook works must still read the client's FIN, to end (and cancel upstream) when it goes.
  socket.pause = pauseFlowOnly;
  return { socket, reusesReadBuffer: true };
}
