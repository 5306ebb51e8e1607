/**
 * What a session's relay needs of a connection: a net.Socket or TLS socket as Node gives it, or a
 * NativeSocket (nativeSockets/) once a plaintext session's sockets are handed to the native addon.
 * The events are a socket's: 'data' (a chunk, while flowing), 'end' (the peer closed its side),
 * 'drain' (a write that returned false has been sent), 'error', then 'close'.
 */
export interface RelaySocket {
  readonly destroyed: boolean;
  readonly writable: boolean;
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'end' | 'close' | 'drain', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  once(event: 'data', listener: (chunk: Buffer) => void): this;
  once(event: 'end' | 'close' | 'drain', listener: () => void): this;
  once(event: 'error', listener: (error: Error) => void): this;
  off(event: 'data', listener: (chunk: Buffer) => void): this;
  off(event: 'end' | 'close' | 'drain', listener: () => void): this;
  off(event: 'error', listener: (error: Error) => void): this;
  /** False: the bytes are kept, but wait for 'drain' before writing more. */
  write(bytes: Buffer): boolean;
  /** Closes this side once everything written has gone out (after `bytes`, when given). */
  end(): void;
  end(bytes: Buffer): void;
  destroy(): void;
  /** Stops 'data' (reading goes on up to a limit, so that a peer's going away is still seen). */
  pause(): void;
  resume(): void;
  cork(): void;
  uncork(): void;
  /**
   * Optional (the native sockets): hands each chunk read to `reader` before any 'data' listener.
   * A chunk not `owned` lies in the socket's reading buffer, overwritten by the next read: it is
   * valid during the call only, and the reader copies whatever it keeps. Undefined: stops it.
   * `target`: where the reader writes; such a pair of native sockets forwards a read the reader
   * writes as it lies without a second call into the addon (what the reader sees is the same).
   */
  readInPlace?(reader: InPlaceReader | undefined, target?: RelaySocket): void;
  /** True when write() sends or copies its bytes before it returns: they may be overwritten after. */
  readonly writesAtOnce?: boolean;
}

export type InPlaceReader = (chunk: Buffer, owned: boolean) => void;
