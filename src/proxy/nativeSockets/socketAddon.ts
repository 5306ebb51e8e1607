/**
 * The optional native socket addon (native/socket), loaded once. Absent (not built, or turned off
 * with PGVEIL_NATIVE=0), sessions are relayed on Node's streams, as they are over TLS.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** An open socket of the addon (opaque). */
export type NativeHandle = object & { readonly nativeHandle: unique symbol };

export const DATA_EVENT = 0;
export const END_EVENT = 1;
export const DRAIN_EVENT = 2;
export const ERROR_EVENT = 3;

export interface SocketAddon {
  /** A socket over a duplicate of `fd` (the caller then closes its own), not reading yet. */
  adopt(fd: number, onEvent: (kind: number, value: number) => void): NativeHandle;
  setReading(handle: NativeHandle, on: boolean): void;
  /** 1: all sent; 0: the rest waits in the addon (a DRAIN event follows); < 0: -errno, the socket failed. */
  write(handle: NativeHandle, bytes: Buffer): number;
  /** A FIN once everything waiting is sent: 0 or -errno. */
  shutdown(handle: NativeHandle): number;
  pendingBytes(handle: NativeHandle): number;
  close(handle: NativeHandle): void;
  /** Where a DATA event's bytes are, during the event only. */
  readBuffer(): Buffer;
}

export type SocketAddonStatus = 'loaded' | 'disabled' | 'not built';

export const SOCKET_ADDON_PATH = fileURLToPath(new URL('../../../native/socket/build/Release/pgveil_socket.node', import.meta.url));

const FUNCTIONS: readonly (keyof SocketAddon)[] = ['adopt', 'setReading', 'write', 'shutdown', 'pendingBytes', 'close', 'readBuffer'];

function load(): { addon: SocketAddon | undefined; status: SocketAddonStatus } {
  if (process.env.PGVEIL_NATIVE === '0' || process.platform === 'win32') return { addon: undefined, status: 'disabled' };
  try {
    const exports = createRequire(import.meta.url)(SOCKET_ADDON_PATH) as Record<string, unknown>;
    if (!FUNCTIONS.every((name) => typeof exports[name] === 'function')) return { addon: undefined, status: 'not built' };
    return { addon: exports as unknown as SocketAddon, status: 'loaded' };
  } catch {
    return { addon: undefined, status: 'not built' };
  }
}

export const socketAddon = load();
