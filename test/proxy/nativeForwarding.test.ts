/**
 * Forwarding between two native sockets (readInPlace with a target): a read the reader writes
 * whole goes on from C once the read's callback is done, without a second call into the addon,
 * and must behave exactly as the write it replaces: in order with everything written before and
 * after it (in the same read, in a nextTick or a promise reaction, corked, in end()), sent even when either socket is
 * destroyed within the read, and with backpressure: while forwarded bytes wait in the target, the
 * source is not read, so a target whose peer stops reading holds at most about one read.
 */
import { randomBytes } from 'node:crypto';
import type net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { socketAddon } from '../../src/proxy/nativeSockets/socketAddon.js';
import type { InPlaceReader, RelaySocket } from '../../src/proxy/session/relaySocket.js';
import { closePairs, collect, digest, pair } from './support/nativePairs.js';

const addon = socketAddon;

afterEach(closePairs);

interface Forwarding {
  /** Reads from `sourcePeer`; its reader writes to `target`. */
  source: RelaySocket;
  target: RelaySocket;
  sourcePeer: net.Socket;
  targetPeer: net.Socket;
}

async function forwarding(reader: (chunk: Buffer, target: RelaySocket) => void): Promise<Forwarding> {
  const from = await pair();
  const to = await pair();
  expect(from.native && to.native).toBe(true);
  const read: InPlaceReader = (chunk) => reader(chunk, to.ours);
  from.ours.readInPlace?.(read, to.ours);
  from.ours.resume();
  to.ours.resume();
  return { source: from.ours, target: to.ours, sourcePeer: from.peer, targetPeer: to.peer };
}

/** The addon's writes to `socket` (a NativeSocket: its handle is private). */
function writesTo(write: { mock: { calls: unknown[][] } }, socket: RelaySocket): number {
  const handle = (socket as unknown as { handle: object }).handle;
  return write.mock.calls.filter(([to]) => to === handle).length;
}

function writableLength(socket: RelaySocket): number {
  return (socket as unknown as { writableLength: number }).writableLength;
}

describe.skipIf(addon === undefined)('native sockets forwarding reads to their target', () => {
  it('forwards each read without a write into the addon, whole and in order, with a target that stops reading', async () => {
    const write = vi.spyOn(addon!, 'write');
    let read = 0;
    const { sourcePeer, targetPeer, target } = await forwarding((chunk, to) => { read += chunk.length; to.write(chunk); });
    targetPeer.pause();
    // More than the kernel's buffers on both sides hold.
    const bytes = randomBytes(64 << 20);
    sourcePeer.write(bytes);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Backpressure from C: the source is not read while forwarded bytes wait, so they stay bounded.
    expect(writableLength(target)).toBeLessThanOrEqual(64 * 1024);
    expect(read).toBeLessThan(bytes.length / 2);
    expect(sourcePeer.writableLength).toBeGreaterThan(0);
    const received = collect(targetPeer, bytes.length);
    expect(digest(await received)).toBe(digest(bytes));
    expect(writesTo(write, target)).toBe(0);
    write.mockRestore();
  });

  it('keeps the order of what is written before, around and after a forwarded read', async () => {
    let reads = 0;
    const { sourcePeer, targetPeer } = await forwarding((chunk, to) => {
      reads++;
      const cut = Math.min(3, chunk.length);
      // Forwarded prefix, a write of other bytes, the rest of the read, a corked piece, a nextTick's.
      to.write(chunk.subarray(0, cut));
      to.write(Buffer.from('<'));
      to.write(chunk.subarray(cut));
      to.cork();
      to.write(Buffer.from('>'));
      to.uncork();
      process.nextTick(() => to.write(Buffer.from('|')));
    });
    const received = collect(targetPeer, 'abcdef<>|'.length);
    sourcePeer.write('abcdef');
    expect((await received).toString()).toBe('abc<def>|');
    expect(reads).toBe(1);
    const second = collect(targetPeer, 'ghijkl'.length + 3);
    sourcePeer.write('ghijkl');
    expect((await second).toString()).toBe('ghi<jkl>|');
  });

  it('a read left to the addon goes before what is written after it: corked, in a nextTick, in a promise reaction', async () => {
    const write = vi.spyOn(addon!, 'write');
    const { sourcePeer, targetPeer, target } = await forwarding((chunk, to) => {
      to.write(chunk);
      process.nextTick(() => to.write(Buffer.from('!')));
      void Promise.resolve().then(() => to.write(Buffer.from('?')));
    });
    const received = collect(targetPeer, 5);
    sourcePeer.write('abc');
    expect((await received).toString()).toBe('abc!?');
    const corked = await forwarding((chunk, to) => {
      to.write(chunk);
      to.cork();
      to.write(Buffer.from('!'));
      to.uncork();
    });
    const second = collect(corked.targetPeer, 4);
    corked.sourcePeer.write('def');
    expect((await second).toString()).toBe('def!');
    // Left alone, a read goes on from C: no write into the addon for it.
    const writes = writesTo(write, target) + writesTo(write, corked.target);
    const quiet = await forwarding((chunk, to) => { to.write(chunk); });
    const fourth = collect(quiet.targetPeer, 3);
    quiet.sourcePeer.write('ghi');
    expect((await fourth).toString()).toBe('ghi');
    expect(writesTo(write, quiet.target)).toBe(0);
    expect(writes).toBeGreaterThan(0);
    write.mockRestore();
  });

  it('sends what was written of a read when the target ends or either socket is destroyed within it', async () => {
    const ending = await forwarding((chunk, to) => { to.write(chunk); to.end(); });
    const ended = new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      ending.targetPeer.on('data', (chunk: Buffer) => chunks.push(chunk));
      ending.targetPeer.once('end', () => resolve(Buffer.concat(chunks)));
    });
    ending.sourcePeer.write('last words');
    expect((await ended).toString()).toBe('last words');

    const targetGone = await forwarding((chunk, to) => { to.write(chunk); to.destroy(); });
    const closed = new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      targetGone.targetPeer.on('data', (chunk: Buffer) => chunks.push(chunk));
      targetGone.targetPeer.once('close', () => resolve(Buffer.concat(chunks)));
    });
    targetGone.sourcePeer.write('before the close');
    expect((await closed).toString()).toBe('before the close');

    let source: RelaySocket | undefined;
    const sourceGone = await forwarding((chunk, to) => { to.write(chunk); source?.destroy(); });
    source = sourceGone.source;
    const received = collect(sourceGone.targetPeer, 'source closes'.length);
    sourceGone.sourcePeer.write('source closes');
    expect((await received).toString()).toBe('source closes');
  });

  it('reports a target that fails under a forward as its error, and leaves its source unread', async () => {
    let read = 0;
    const { sourcePeer, target, targetPeer } = await forwarding((chunk, to) => { read += chunk.length; to.write(chunk); });
    const errors: Error[] = [];
    target.on('error', (error) => errors.push(error));
    const gone = new Promise<void>((resolve) => target.once('close', () => resolve()));
    targetPeer.pause();
    // Forwarded bytes wait in the target, then its peer resets: they never go out.
    for (let i = 0; i < 200 && sourcePeer.writableLength === 0; i++) {
      sourcePeer.write(randomBytes(256 * 1024));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    targetPeer.resetAndDestroy();
    await gone;
    expect(errors).toHaveLength(1);
    // As a writer waiting for a 'drain' that never comes: the source is not read on (its unread
    // bytes make its close a reset its peer sees).
    const before = read;
    sourcePeer.write(randomBytes(64 * 1024));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(read).toBe(before);
  });

  it('forwards nothing a reader did not write as it lies, nor a read it copied', async () => {
    const write = vi.spyOn(addon!, 'write');
    const { sourcePeer, targetPeer, target } = await forwarding((chunk, to) => {
      to.write(Buffer.from(chunk)); // a copy: written, not forwarded
      to.write(chunk.subarray(1));  // not from the read's first byte: written
    });
    const received = collect(targetPeer, 'xyz'.length + 'yz'.length);
    sourcePeer.write('xyz');
    expect((await received).toString()).toBe('xyzyz');
    expect(writesTo(write, target)).toBe(2);
    write.mockRestore();
  });
});
