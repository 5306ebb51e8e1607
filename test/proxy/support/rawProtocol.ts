/**
 * Byte-level protocol checks: log in with pg (whatever the auth), then take over its socket to send
 * hand-built frontend messages and collect the backend messages exactly as they arrive. Comparing
 * these between a direct connection and one through the proxy checks transparency byte for byte.
 */
import type { Duplex } from 'node:stream';
import pg from 'pg';

export interface BackendMessage {
  type: string;
  body: Buffer;
}

export interface RawSession {
  send(bytes: Buffer | Buffer[]): void;
  /** Collects messages until `readyCount` ReadyForQuery messages arrived (or the socket closed). */
  readUntilReady(readyCount?: number, timeoutMs?: number): Promise<BackendMessage[]>;
  /** Collects messages until one of `type` arrived (e.g. 'G', a CopyInResponse). */
  readUntil(type: string, timeoutMs?: number): Promise<BackendMessage[]>;
  /** Counts messages by type until `readyCount` ReadyForQuery arrived, keeping none (for big results). */
  countUntilReady(readyCount?: number, timeoutMs?: number): Promise<Map<string, number>>;
  /** Messages until the socket closes. */
  readUntilClosed(timeoutMs?: number): Promise<BackendMessage[]>;
  socket: Duplex;
  close(): void;
}

interface PgInternals {
  connection: { stream: Duplex };
}

export async function openRawSession(config: pg.ClientConfig): Promise<RawSession> {
  const client = new pg.Client(config);
  await client.connect();
  const socket = (client as unknown as PgInternals).connection.stream;
  socket.removeAllListeners('data');
  socket.removeAllListeners('end');
  socket.removeAllListeners('close');
  socket.removeAllListeners('error');
  socket.on('error', () => undefined);
  let buffer: Buffer = Buffer.alloc(0);
  const messages: BackendMessage[] = [];
  let closed = false;
  let counting: Map<string, number> | null = null;
  let wake: (() => void) | null = null;
  socket.on('data', (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    let pos = 0;
    while (buffer.length - pos >= 5) {
      const total = 1 + buffer.readInt32BE(pos + 1);
      if (buffer.length - pos < total) break;
      const type = String.fromCharCode(buffer[pos] as number);
      if (counting && type !== 'Z') counting.set(type, (counting.get(type) ?? 0) + 1);
      else messages.push({ type, body: Buffer.from(buffer.subarray(pos + 5, pos + total)) });
      pos += total;
    }
    buffer = buffer.subarray(pos);
    wake?.();
  });
  socket.on('close', () => {
    closed = true;
    wake?.();
  });

  async function waitFor(done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done() && !closed) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; got ${messages.map((m) => m.type).join('')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  }

  return {
    socket,
    send: (bytes) => {
      socket.write(Array.isArray(bytes) ? Buffer.concat(bytes) : bytes);
    },
    readUntilReady: async (readyCount = 1, timeoutMs = 10_000) => {
      const count = (): number => messages.filter((m) => m.type === 'Z').length;
      await waitFor(() => count() >= readyCount, timeoutMs);
      return messages.splice(0, messages.length);
    },
    readUntil: async (type, timeoutMs = 10_000) => {
      await waitFor(() => messages.some((m) => m.type === type), timeoutMs);
      return messages.splice(0, messages.length);
    },
    countUntilReady: async (readyCount = 1, timeoutMs = 30_000) => {
      const counts = new Map<string, number>();
      counting = counts;
      const count = (): number => messages.filter((m) => m.type === 'Z').length;
      await waitFor(() => count() >= readyCount, timeoutMs);
      counting = null;
      counts.set('Z', messages.splice(0, messages.length).filter((m) => m.type === 'Z').length);
      return counts;
    },
    readUntilClosed: async (timeoutMs = 10_000) => {
      await waitFor(() => false, timeoutMs);
      return messages.splice(0, messages.length);
    },
    close: () => socket.destroy(),
  };
}

/** Messages as comparable text: type and body in hex (or text, for readable failures). */
export function describeMessages(messages: BackendMessage[]): string[] {
  return messages.map((message) => `${message.type} ${message.body.toString('latin1').replace(/[^\x20-\x7e]/g, '.')}|${message.body.toString('hex')}`);
}

/** A hand-built frontend message: type, length, then the parts as given (for frames no serializer writes). */
export function rawFrame(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

export const int16Bytes = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeInt16BE(n); return b; };
export const uint16Bytes = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b; };
export const int32Bytes = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
