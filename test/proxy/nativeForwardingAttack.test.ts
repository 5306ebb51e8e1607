/**
 * Attacks on the deferred forward (readInPlace with a target): a reader that, within the read it
 * wrote from its first byte, stops reading in place, moves its pairing to another target, loses its
 * target to another source, or throws. Whatever it wrote before must go out exactly once, in order,
 * to the socket it wrote it to, as the write the forward replaces would have.
 */
import type net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { socketAddon } from '../../src/proxy/nativeSockets/socketAddon.js';
import type { InPlaceReader, RelaySocket } from '../../src/proxy/session/relaySocket.js';
import { closePairs, collect, pair } from './support/nativePairs.js';

afterEach(closePairs);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything `peer` receives, as text, after `ms` of quiet. */
function receivedBy(peer: net.Socket): () => string {
  const chunks: Buffer[] = [];
  peer.on('data', (chunk: Buffer) => chunks.push(chunk));
  peer.resume();
  return () => Buffer.concat(chunks).toString();
}

async function nativePair(): Promise<{ ours: RelaySocket; peer: net.Socket }> {
  const made = await pair();
  expect(made.native).toBe(true);
  made.ours.resume();
  return made;
}

describe.skipIf(socketAddon === undefined)('the deferred forward, attacked from within the read', () => {
  it('a reader that writes the read and then stops reading in place within it: the bytes still go out, once', async () => {
    const from = await nativePair();
    const to = await nativePair();
    const got = receivedBy(to.peer);
    let reads = 0;
    const reader: InPlaceReader = (chunk) => {
      reads++;
      to.ours.write(chunk);
      from.ours.readInPlace?.(undefined); // as MessagePump.stop() within its own read
    };
    from.ours.readInPlace?.(reader, to.ours);
    from.ours.resume();
    from.peer.write('stopped mid-read');
    await sleep(200);
    expect(reads).toBe(1);
    expect(got()).toBe('stopped mid-read');
  });

  it('a reader that writes the read to one target, re-pairs with another and writes it there too: each gets it once', async () => {
    const from = await nativePair();
    const first = await nativePair();
    const second = await nativePair();
    const gotFirst = receivedBy(first.peer);
    const gotSecond = receivedBy(second.peer);
    let moved = false;
    const reader: InPlaceReader = (chunk) => {
      if (moved) {
        second.ours.write(chunk);
        return;
      }
      moved = true;
      first.ours.write(chunk);
      from.ours.readInPlace?.(reader, second.ours);
      second.ours.write(chunk);
      first.ours.write(Buffer.from('|after'));
    };
    from.ours.readInPlace?.(reader, first.ours);
    from.ours.resume();
    from.peer.write('one');
    await sleep(200);
    from.peer.write('two');
    await sleep(200);
    expect({ first: gotFirst(), second: gotSecond() }).toEqual({ first: 'one|after', second: 'onetwo' });
  });

  it('a target another source pairs with while the first is within a read keeps what the first wrote to it', async () => {
    const first = await nativePair();
    const other = await nativePair();
    const to = await nativePair();
    const got = receivedBy(to.peer);
    const otherReader: InPlaceReader = (chunk) => { to.ours.write(chunk); };
    const reader: InPlaceReader = (chunk) => {
      to.ours.write(chunk);
      // The target is taken over (its forwarding source changes) while this read's forward is due.
      other.ours.readInPlace?.(otherReader, to.ours);
    };
    first.ours.readInPlace?.(reader, to.ours);
    first.ours.resume();
    other.ours.resume();
    first.peer.write('first');
    await sleep(200);
    other.peer.write('+other');
    await sleep(200);
    expect(got()).toBe('first+other');
  });

  it('a reader that throws after writing the read: what it wrote goes out (the throw is reported, not the bytes lost)', async () => {
    const from = await nativePair();
    const to = await nativePair();
    const received = collect(to.peer, 'written before the throw'.length);
    const thrown: unknown[] = [];
    // The addon reports the throw as the process's uncaught exception: captured here, not the test's failure.
    process.setUncaughtExceptionCaptureCallback((error) => { thrown.push(error); });
    try {
      let reads = 0;
      const reader: InPlaceReader = (chunk) => {
        to.ours.write(chunk);
        if (reads++ === 0) throw new Error('a bug in the reader');
      };
      from.ours.readInPlace?.(reader, to.ours);
      from.ours.resume();
      from.peer.write('written before the throw');
      const result = await Promise.race([received.then((bytes) => bytes.toString()), sleep(1_000).then(() => 'nothing arrived')]);
      expect(thrown.map((error) => (error as Error).message)).toEqual(['a bug in the reader']);
      expect(result).toBe('written before the throw');
    } finally {
      process.setUncaughtExceptionCaptureCallback(null);
    }
  });
});
