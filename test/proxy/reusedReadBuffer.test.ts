/**
 * The accepted client socket moved to one that reads into a reused buffer (src/proxy/reusedReadBuffer.ts).
 * It relies on private parts of Node's lib/net.js: these tests fail when a Node upgrade changes
 * them (the handle is no longer moved, the buffer no longer read into, the server's count of
 * connections no longer comes down), and check that bytes arrive whole and in order whatever
 * the reads and the backpressure, and that TLS can still be started on the new socket.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { readWithReusedBuffer, type AcceptedClientSocket } from '../../src/proxy/reusedReadBuffer.js';
import { generateSelfSignedCertificate } from '../../src/proxy/tls/selfSignedCertificate.js';

interface Listening {
  server: net.Server;
  port: number;
  /** The sockets the server served, in the order accepted. */
  served: AcceptedClientSocket[];
  next(): Promise<AcceptedClientSocket>;
}

const servers: net.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function listen(readBuffer?: () => Buffer, configure?: (server: net.Server) => void): Promise<Listening> {
  const served: AcceptedClientSocket[] = [];
  const waiting: ((accepted: AcceptedClientSocket) => void)[] = [];
  let taken = 0;
  const server = net.createServer({ pauseOnConnect: true }, (accepted) => {
    const result = readWithReusedBuffer(accepted, readBuffer?.());
    served.push(result);
    waiting.shift()?.(result);
  });
  configure?.(server);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    server,
    port,
    served,
    next: () => new Promise((resolve) => {
      const ready = served[taken++];
      if (ready) resolve(ready);
      else waiting.push(resolve);
    }),
  };
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(socket));
    socket.once('error', reject);
  });
}

function collect(socket: net.Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= bytes) {
        socket.off('data', onData);
        resolve(Buffer.concat(chunks));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

const closed = (socket: net.Socket): Promise<void> => new Promise((resolve) => socket.once('close', () => resolve()));

describe("Node's net internals the reused read buffer relies on", () => {
  it('moves the accepted handle to a socket that reads into the given buffer', async () => {
    const readBuffer = Buffer.alloc(1024);
    const listening = await listen(() => readBuffer);
    const client = await connect(listening.port);
    const { socket, reusesReadBuffer } = await listening.next();
    expect(reusesReadBuffer).toBe(true);
    const received = collect(socket, 11);
    client.write('hello world');
    expect((await received).toString()).toBe('hello world');
    // Read through onread into this very buffer, not on Node's stream path.
    expect(readBuffer.subarray(0, 11).toString()).toBe('hello world');
    // Writes go out on the moved handle.
    const echoed = collect(client, 4);
    socket.write('pong');
    expect((await echoed).toString()).toBe('pong');
    client.destroy();
    await closed(socket);
  });

  it("counts the connection down when the new socket closes: server.close() completes", async () => {
    const listening = await listen();
    const clients = await Promise.all([connect(listening.port), connect(listening.port)]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(listening.served.map((s) => s.reusesReadBuffer)).toEqual([true, true]);
    const count = (): Promise<number> => new Promise((resolve, reject) => listening.server.getConnections((error, n) => (error ? reject(error) : resolve(n))));
    expect(await count()).toBe(2);
    let stopped = false;
    const stopping = new Promise<void>((resolve) => listening.server.close(() => {
      stopped = true;
      resolve();
    }));
    servers.splice(servers.indexOf(listening.server), 1);
    clients[0]?.destroy();
    await closed(listening.served[0]?.socket as net.Socket);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await count()).toBe(1);
    expect(stopped).toBe(false);
    listening.served[1]?.socket.destroy(); // from the server's side this time
    await stopping;
    expect(await count()).toBe(0);
    clients[1]?.destroy();
  });

  it('keeps maxConnections: a closed connection frees its place', async () => {
    const listening = await listen(undefined, (server) => {
      server.maxConnections = 1;
    });
    const first = await connect(listening.port);
    const served = await listening.next();
    const dropped = await connect(listening.port);
    await closed(dropped); // the server closes it at once: it is full
    expect(listening.served).toHaveLength(1);
    first.destroy();
    await closed(served.socket);
    const again = await connect(listening.port);
    const second = await listening.next();
    expect(second.reusesReadBuffer).toBe(true);
    const received = collect(second.socket, 3);
    again.write('abc');
    expect((await received).toString()).toBe('abc');
    again.destroy();
    await closed(second.socket);
  });
});

describe('bytes through the reused read buffer', () => {
  it('delivers many tiny writes whole and in order', async () => {
    const listening = await listen(() => Buffer.alloc(64));
    const client = await connect(listening.port);
    const { socket } = await listening.next();
    const sent = randomBytes(2_000);
    const received = collect(socket, sent.length);
    for (let i = 0; i < sent.length; i += 3) {
      client.write(sent.subarray(i, i + 3));
      if (i % 60 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await received).equals(sent)).toBe(true);
    client.destroy();
  });

  it('keeps what arrives while nobody reads, in order, and stops reading past the high-water mark', async () => {
    const listening = await listen();
    const client = await connect(listening.port);
    const { socket } = await listening.next();
    const sent = randomBytes(16 * 1024 * 1024);
    let written = false;
    client.write(sent, () => {
      written = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Nobody has read: the Readable stopped the reads once full, so the client could not send it all.
    expect(written).toBe(false);
    expect(socket.readableLength).toBeGreaterThan(0);
    const hash = createHash('sha256');
    let received = 0;
    await new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        received += chunk.length;
        // Pauses and resumes in between, as the message pump does under backpressure.
        if (received % 3 === 0) {
          socket.pause();
          setImmediate(() => socket.resume());
        }
        if (received === sent.length) resolve();
      });
    });
    expect(hash.digest('hex')).toBe(createHash('sha256').update(sent).digest('hex'));
    client.destroy();
  });

  it('ends the stream after the last bytes when the client closes its side', async () => {
    const listening = await listen();
    const client = await connect(listening.port);
    const { socket } = await listening.next();
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    client.end('last words');
    await ended;
    expect(Buffer.concat(chunks).toString()).toBe('last words');
  });

  it('still reads while paused, as the stream path does: the client closing ends a paused socket', async () => {
    const listening = await listen();
    const client = await connect(listening.port);
    const { socket } = await listening.next();
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.pause(); // as the pump does while a hook works
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    client.end();
    await ended;
    expect(chunks).toEqual([]);
  });

  it('starts TLS on the new socket, as after an SSLRequest', async () => {
    const { key, cert } = generateSelfSignedCertificate();
    const secureContext = tls.createSecureContext({ key, cert });
    const listening = await listen();
    const raw = await connect(listening.port);
    const { socket, reusesReadBuffer } = await listening.next();
    expect(reusesReadBuffer).toBe(true);
    const request = collect(socket, 8);
    raw.write(Buffer.from('0000000804d2162f', 'hex'));
    expect((await request).toString('hex')).toBe('0000000804d2162f');
    socket.pause();
    const answered = collect(raw, 1);
    socket.write('S');
    expect((await answered).toString()).toBe('S');
    const server = new tls.TLSSocket(socket, { isServer: true, secureContext });
    const client = tls.connect({ socket: raw, rejectUnauthorized: false });
    await new Promise((resolve) => client.once('secureConnect', resolve));
    const sent = randomBytes(1024 * 1024);
    const hash = createHash('sha256');
    let received = 0;
    const done = new Promise<void>((resolve) => {
      server.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        received += chunk.length;
        if (received === sent.length) resolve();
      });
    });
    client.write(sent);
    await done;
    expect(hash.digest('hex')).toBe(createHash('sha256').update(sent).digest('hex'));
    const echoed = collect(client, 5);
    server.write('hello');
    expect((await echoed).toString()).toBe('hello');
    client.destroy();
    await closed(socket);
  });
});
