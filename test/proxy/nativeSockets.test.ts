/**
 * Sockets handed to the native addon (src/proxy/nativeSockets) behave towards the relay as Node's
 * sockets do: bytes whole and in order both ways whatever the chunking and backpressure, what Node
 * read before the hand-over first, pause holding data (and reading stopping past the high-water
 * mark), the peer's FIN, our FIN, resets, and no descriptor left open. The hand-over relies on a
 * private part of Node's net.Socket (`_handle.fd`): the first test fails when a Node upgrade
 * changes it.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handOverSocket } from '../../src/proxy/nativeSockets/socketHandOver.js';
import { SOCKET_ADDON_PATH, socketAddon } from '../../src/proxy/nativeSockets/socketAddon.js';
import { MessagePump } from '../../src/proxy/session/messagePump.js';
import { FORWARD, type PumpHandler } from '../../src/proxy/session/pumpHandler.js';
import { generateSelfSignedCertificate } from '../../src/proxy/tls/selfSignedCertificate.js';

import { closePairs, collect, digest, folders, pair, servers, writeInPieces } from './support/nativePairs.js';

const addon = socketAddon;
const built = addon !== undefined;

afterEach(closePairs);
const openDescriptors = (): number => readdirSync('/proc/self/fd').length;

describe.skipIf(!built)('a socket handed to the native addon', () => {
  it('is handed over on this Node version, TCP and Unix-domain alike', async () => {
    expect((await pair()).native).toBe(true);
    expect((await pair({ unix: true })).native).toBe(true);
  });

  it('relays bytes whole and in order both ways, through backpressure', async () => {
    const { ours, peer } = await pair();
    const toPeer = randomBytes(8 << 20);
    const fromPeer = randomBytes(8 << 20);
    // The peer reads slowly at first, so our writes fill the kernel's buffers and wait in the addon.
    peer.pause();
    const received = collect(ours, fromPeer.length);
    const sending = writeInPieces(ours, toPeer, 256 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const peerReceived = collect(peer, toPeer.length);
    const [waits] = await Promise.all([sending, writeInPieces(peer, fromPeer, 70_000)]);
    expect(waits).toBeGreaterThan(0);
    expect(digest(await peerReceived)).toBe(digest(toPeer));
    expect(digest(await received)).toBe(digest(fromPeer));
  });

  it('hands over first what Node had read before, then what comes after', async () => {
    let peerSocket: net.Socket | undefined;
    const { ours, bytes, native } = await pair({
      beforeHandOver: async (accepted, peer) => {
        peerSocket = peer;
        peer.write('read by Node;');
        while (accepted.readableLength === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      },
    });
    expect(native).toBe(true);
    expect(bytes.toString()).toBe('read by Node;');
    (peerSocket as net.Socket).write('read by the addon');
    expect((await collect(ours, 17)).toString()).toBe('read by the addon');
  });

  it('hands reads in place to the reader that asks, a copy to any data listener, and copies (owned) while paused', async () => {
    const { ours, peer } = await pair();
    const inPlace: Buffer[] = [];
    const owned: Buffer[] = [];
    const viaData: Buffer[] = [];
    const reading = new Set<ArrayBufferLike>();
    ours.readInPlace?.((chunk, isOwned) => {
      // Copied here: a chunk read in place is only valid during this call.
      (isOwned ? owned : inPlace).push(Buffer.from(chunk));
      if (!isOwned) reading.add(chunk.buffer);
    });
    const onData = (chunk: Buffer): void => { viaData.push(chunk); };
    ours.on('data', onData);
    let once = 0;
    ours.once('data', () => { once++; });
    ours.resume();
    peer.write('first');
    while (inPlace.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    ours.pause();
    peer.write('held');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(owned).toHaveLength(0);
    ours.resume();
    while (owned.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(Buffer.concat(inPlace).toString()).toBe('first');
    expect(Buffer.concat(owned).toString()).toBe('held');
    expect(Buffer.concat(viaData).toString()).toBe('firstheld');
    // In place: one buffer, the addon's, every time; the data listener got buffers of its own.
    expect(reading.size).toBe(1);
    expect(viaData.some((chunk) => reading.has(chunk.buffer))).toBe(false);
    expect(once).toBe(1);
    ours.readInPlace?.(undefined);
    peer.write('after');
    while (Buffer.concat(viaData).length < 14) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(Buffer.concat(inPlace).toString()).toBe('first');
    // With no listener left, nothing is emitted (nor copied) for the reader's reads.
    ours.off('data', onData);
    ours.readInPlace?.((chunk, isOwned) => { if (!isOwned) inPlace.push(Buffer.from(chunk)); });
    const emit = vi.spyOn(ours as unknown as { emit: (event: string) => boolean }, 'emit');
    peer.write('last');
    while (Buffer.concat(inPlace).length < 9) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(emit.mock.calls.filter(([event]) => event === 'data')).toHaveLength(0);
  });

  it('keeps what arrives while paused, in order, and stops reading past the high-water mark', async () => {
    const { ours, peer } = await pair();
    const bytes = randomBytes(4 << 20);
    peer.write(bytes);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Not read on: the rest waits in the peer's socket (and the kernel's buffers), not in ours.
    expect(peer.writableLength).toBeGreaterThan(1 << 20);
    expect(digest(await collect(ours, bytes.length))).toBe(digest(bytes));
  });

  it('reads on after a reader that pauses at each chunk has taken what was held past the high-water mark', async () => {
    const { ours, peer } = await pair();
    const bytes = randomBytes(1 << 20);
    peer.write(bytes);
    // Paused: the reads held reach the high-water mark and reading stops.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const received: Buffer[] = [];
    let length = 0;
    // A reader that pauses at every chunk (as the relay does while a hook works) and resumes a turn later.
    ours.on('data', (chunk) => {
      received.push(chunk);
      length += chunk.length;
      ours.pause();
      setImmediate(() => ours.resume());
    });
    ours.resume();
    for (let i = 0; i < 400 && length < bytes.length; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(length).toBe(bytes.length);
    expect(digest(Buffer.concat(received))).toBe(digest(bytes));
  });

  it("delivers the peer's FIN as 'end' after the data before it, then closes", async () => {
    const { ours, peer } = await pair();
    peer.end('last words');
    await new Promise((resolve) => setTimeout(resolve, 50)); // the FIN is read while paused
    const events: string[] = [];
    ours.on('data', (chunk) => events.push(`data ${chunk.toString()}`));
    ours.on('end', () => events.push('end'));
    const closed = new Promise<void>((resolve) => ours.once('close', () => resolve()));
    const peerEnded = new Promise<void>((resolve) => peer.once('end', () => resolve()));
    peer.resume();
    ours.resume();
    await closed;
    await peerEnded; // our side was closed too (no half-open session)
    expect(events).toEqual(['data last words', 'end']);
    expect(ours.destroyed).toBe(true);
  });

  it("delivers the peer's FIN as 'end' while paused when nothing read waits (a session held by a hook sees its client go)", async () => {
    const { ours, peer } = await pair();
    const received = collect(ours, 3);
    peer.write('abc');
    await received;
    ours.pause();
    const ended = new Promise<void>((resolve) => ours.once('end', () => resolve()));
    peer.end();
    await ended;
  });

  it('end(bytes) sends them, then a FIN; closes once the peer closes too', async () => {
    const { ours, peer } = await pair();
    ours.resume();
    const received = collect(peer, 5);
    const peerEnded = new Promise<void>((resolve) => peer.once('end', () => resolve()));
    ours.end(Buffer.from('FATAL'));
    expect(ours.writable).toBe(false);
    expect((await received).toString()).toBe('FATAL');
    await peerEnded;
    const closed = new Promise<void>((resolve) => ours.once('close', () => resolve()));
    peer.end();
    await closed;
  });

  it('delivers the bytes that came before a reset, then the error', async () => {
    const { ours, peer } = await pair();
    const events: string[] = [];
    ours.on('data', (chunk) => events.push(`data ${chunk.length}`));
    ours.on('error', (error) => events.push(`error ${(error as NodeJS.ErrnoException).code ?? ''}`));
    const closed = new Promise<void>((resolve) => ours.once('close', () => resolve()));
    ours.pause();
    peer.write(Buffer.alloc(1000, 1));
    peer.resetAndDestroy();
    // Not resumed: a reader that never reads again must still hear of the failure.
    await closed;
    expect(events).toEqual(['data 1000', 'error ECONNRESET']);
  });

  it("says to wait once corked writes pass the high-water mark, and 'drain' follows", async () => {
    const { ours, peer } = await pair();
    const piece = randomBytes(12 * 1024);
    ours.cork();
    expect(ours.write(piece)).toBe(true);
    expect(ours.write(piece)).toBe(false);
    const drained = new Promise<void>((resolve) => ours.once('drain', () => resolve()));
    ours.uncork();
    await drained; // sent at once here (the peer's buffers are empty): on the next tick
    peer.pause();
    let told = false;
    for (let i = 0; i < 400 && !told; i++) {
      ours.cork();
      told = !ours.write(piece) || !ours.write(piece);
      ours.uncork();
    }
    expect(told).toBe(true);
    const drainedAgain = new Promise<void>((resolve) => ours.once('drain', () => resolve()));
    peer.resume();
    await drainedAgain;
    ours.destroy();
  });

  it('keeps a pump whose hook replaces every message within bounds towards a reader that does not read', async () => {
    const { ours: target, peer: slowReader } = await pair();
    slowReader.pause();
    const { ours: source, peer: producer } = await pair();
    const limits = new Uint32Array(256).fill(1 << 30);
    const intercepted = new Uint8Array(256);
    intercepted[0x44] = 1;
    const handler: PumpHandler = { observe: () => FORWARD, intercept: (message) => Buffer.from(message), takeAfter: () => [], onFailure: () => undefined };
    const pump = new MessagePump(source, target, limits, intercepted, handler);
    pump.start();
    source.resume();
    const frame = Buffer.alloc(4096 + 5, 0x61);
    frame[0] = 0x44;
    frame.writeInt32BE(4096 + 4, 1);
    const chunk = Buffer.concat(Array.from({ length: 16 }, () => frame));
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      if (!producer.write(chunk)) {
        await Promise.race([new Promise((resolve) => producer.once('drain', resolve)), new Promise((resolve) => setTimeout(resolve, deadline - Date.now()))]);
      }
    }
    const waiting = (target as unknown as { writableLength: number }).writableLength;
    pump.stop();
    for (const socket of [target, source, producer, slowReader]) socket.destroy();
    expect(waiting).toBeLessThan(4 << 20);
  });

  it('lets a worker thread end with a socket still open (the addon loaded there only)', () => {
    const script = `
      const { Worker, isMainThread, parentPort } = require('node:worker_threads');
      const net = require('node:net');
      if (isMainThread) {
        (async () => {
          for (let i = 0; i < 5; i++) {
            const worker = new Worker(__filename);
            await new Promise((resolve) => { worker.on('message', () => worker.terminate()); worker.on('exit', resolve); });
          }
          console.log('done');
        })();
      } else {
        const addon = require(process.env.ADDON);
        const server = net.createServer({ pauseOnConnect: true });
        server.listen(0, '127.0.0.1', () => {
          server.once('connection', (accepted) => {
            const handle = addon.adopt(accepted._handle.fd, () => undefined);
            accepted.destroy();
            addon.setReading(handle, true);
            server.close();
            parentPort.postMessage('open');
          });
          net.connect(server.address().port, '127.0.0.1');
        });
      }`;
    const folder = mkdtempSync(join(tmpdir(), 'pgveil-native-'));
    folders.push(folder);
    const file = join(folder, 'worker.cjs');
    writeFileSync(file, script);
    const result = spawnSync(process.execPath, [file], { env: { ...process.env, ADDON: SOCKET_ADDON_PATH }, encoding: 'utf8', timeout: 60_000 });
    expect({ signal: result.signal, status: result.status, stdout: result.stdout.trim() }).toEqual({ signal: null, status: 0, stdout: 'done' });
  });

  it("reports a reset as 'error' (ECONNRESET) then 'close', and a write after it fails quietly", async () => {
    const { ours, peer } = await pair();
    const errors: NodeJS.ErrnoException[] = [];
    ours.on('error', (error) => errors.push(error));
    const closed = new Promise<void>((resolve) => ours.once('close', () => resolve()));
    ours.resume();
    peer.resetAndDestroy();
    await closed;
    expect(errors.map((error) => error.code)).toEqual(['ECONNRESET']);
    expect(ours.write(Buffer.from('after'))).toBe(false);
  });

  it('a failure nobody listens for does not bring the process down', async () => {
    const { ours, peer } = await pair();
    const closed = new Promise<void>((resolve) => ours.once('close', () => resolve()));
    ours.resume();
    peer.resetAndDestroy();
    await closed;
  });

  it.skipIf(!existsSync('/proc/self/fd'))('leaves no descriptor open', async () => {
    await pair(); // the server and first sockets' descriptors settle
    const before = openDescriptors();
    for (let i = 0; i < 20; i++) {
      const { ours, peer } = await pair();
      const gone = Promise.all([
        new Promise<void>((resolve) => ours.once('close', () => resolve())),
        new Promise<void>((resolve) => peer.once('close', () => resolve())),
      ]);
      ours.resume();
      peer.end();
      await gone;
    }
    for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openDescriptors()).toBeLessThanOrEqual(before);
  });

  it('leaves a socket with writes still queued in Node, a TLS socket, or no addon, to Node', async () => {
    const { ours: busy, native: busyNative } = await pair({
      beforeHandOver: async (accepted) => {
        accepted.write(randomBytes(64 << 20)); // more than the kernel takes at once: some waits in Node
        expect(accepted.writableLength).toBeGreaterThan(0);
      },
    });
    expect(busyNative).toBe(false);
    busy.destroy();

    const { peer } = await pair();
    expect(handOverSocket(peer, null)).toBeNull();

    const { cert, key } = generateSelfSignedCertificate();
    const secureServer = tls.createServer({ cert, key }, () => undefined);
    servers.push(secureServer);
    await new Promise<void>((resolve) => secureServer.listen(0, '127.0.0.1', resolve));
    const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: (secureServer.address() as net.AddressInfo).port, rejectUnauthorized: false }, () => resolve(socket));
      socket.once('error', reject);
    });
    expect(handOverSocket(secure)).toBeNull();
    secure.destroy();
  });
});
