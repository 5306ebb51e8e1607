/**
 * The optional native socket addon (native/socket), loaded once. Absent (not built, or turned off
 * with PGVEIL_NATIVE=0), sessions are relayed on Node's streams, as they are over TLS.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** An open socket of the addon (opaque). */
export type NativeHandle = object & { readonly nativeHandle: unique symbol };

export const END_EVENT = 1;
export const DRAIN_EVENT = 2;
export const ERROR_EVENT = 3;

export interface SocketAddon {
  /**
   * A socket over a duplicate of `fd` (the caller then closes its own), not reading yet. Its events:
   * onEvent(bytes) for DATA (the read's length, no kind); onEvent(value, kind) for the others.
   */
  adopt(fd: number, onEvent: (value: number, kind?: number) => void): NativeHandle;
  setReading(handle: NativeHandle, on: boolean): void;
  /** 1: all sent; 0: the rest waits in the addon (a DRAIN event follows); < 0: -errno, the socket failed. */
  write(handle: NativeHandle, bytes: Buffer): number;
  /**
   * The bytes of a read of `handle` that the forward slot holds when its DATA callback is done are
   * sent on to `to` (null: no longer); `handle` is not read while they wait in `to`.
   */
  pair(handle: NativeHandle, to: NativeHandle | null): void;
  /** The forward slot: one int32 in the machine's order, cleared by the addon before each DATA event. */
  forwardSlot(): Buffer;
  /** A FIN once everything waiting is sent: 0 or -errno. */
  shutdown(handle: NativeHandle): number;
  pendingBytes(handle: NativeHandle): number;
  close(handle: NativeHandle): void;
  /** Where a DATA event's bytes are, during the event only. */
  readBuffer(): Buffer;
}

export const SOCKET_ADDON_PATH = fileURLToPath(new URL('../../../native/socket/build/Release/pgveil_socket.node', import.meta.url));

const FUNCTIONS: readonly (keyof SocketAddon)[] = ['adopt', 'setReading', 'write', 'pair', 'shutdown', 'pendingBytes', 'close', 'readBuffer', 'forwardSlot'];

/** Why sessions are or are not relayed by the addon, for the startup log line. */
export type SocketAddonStatus = 'loaded' | 'disabled' | 'not built' | 'missing from this build' | 'not on this platform';

/** The addon (undefined when it is turned off with PGVEIL_NATIVE=0, not built, or not this build's) and why. */
function load(): { addon: SocketAddon | undefined; status: SocketAddonStatus } {
  if (process.env.PGVEIL_NATIVE === '0') return { addon: undefined, status: 'disabled' };
  if (process.platform === 'win32') return { addon: undefined, status: 'not on this platform' };
  let exports: Record<string, unknown>;
  try {
    exports = createRequire(import.meta.url)(SOCKET_ADDON_PATH) as Record<string, unknown>;
  } catch {
    return { addon: undefined, status: 'not built' };
  }
  if (!FUNCTIONS.every((name) => typeof exports[name] === 'function')) return { addon: undefined, status: 'missing from this build' };
  return { addon: exports as unknown as SocketAddon, status: 'loaded' };
}

const loaded = load();
export const socketAddon = loaded.addon;
export const socketAddonStatus: SocketAddonStatus = loaded.status;

/** What the proxy's sessions run on, for the startup line: the addon's status, unless the configuration turned it off. */
export function socketIoStatus(nativeSocketIo: boolean): SocketAddonStatus | 'off (proxy.nativeSocketIo: false)' {
  return nativeSocketIo ? socketAddonStatus : 'off (proxy.nativeSocketIo: false)';
}
