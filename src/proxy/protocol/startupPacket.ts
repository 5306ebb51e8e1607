/** Decodes the untyped first packet a client sends: StartupMessage, SSLRequest, GSSENCRequest or CancelRequest. */
import { CANCEL_REQUEST_CODE, GSSENC_REQUEST_CODE, SSL_REQUEST_CODE } from './messages.js';

export type StartupPacket =
  | { kind: 'ssl' }
  | { kind: 'gssenc' }
  | { kind: 'cancel'; processId: number; secretKey: Buffer }
  | { kind: 'startup'; majorVersion: number; minorVersion: number; parameters: Map<string, string>; protocolOptions: string[] };

export class ProtocolViolation extends Error {
  override readonly name = 'ProtocolViolation';

  /**
   * `silent`: close without an answer, as PostgreSQL does for a first packet whose length makes no
   * sense (an HTTP request, a Terminate, random bytes): such a peer is no PostgreSQL client.
   */
  constructor(message: string, readonly silent = false) {
    super(message);
  }
}

/** `packet` is the whole packet, its length word included. */
export function parseStartupPacket(packet: Buffer): StartupPacket {
  if (packet.length < 8) throw new ProtocolViolation('invalid length of startup packet', true);
  const code = packet.readInt32BE(4);
  if (code === SSL_REQUEST_CODE) return { kind: 'ssl' };
  if (code === GSSENC_REQUEST_CODE) return { kind: 'gssenc' };
  if (code === CANCEL_REQUEST_CODE) {
    if (packet.length < 16) throw new ProtocolViolation('invalid length of cancel request');
    return { kind: 'cancel', processId: packet.readInt32BE(8), secretKey: Buffer.from(packet.subarray(12)) };
  }
  const majorVersion = code >>> 16;
  const minorVersion = code & 0xffff;
  if (majorVersion !== 3) {
    throw new ProtocolViolation(`unsupported frontend protocol ${majorVersion}.${minorVersion}: server supports 3.0 to 3.0`);
  }
  const parameters = new Map<string, string>();
  const protocolOptions: string[] = [];
  let offset = 8;
  for (;;) {
    const nameEnd = packet.indexOf(0, offset);
    if (nameEnd < 0) throw new ProtocolViolation('invalid startup packet layout: expected terminator as last byte');
    if (nameEnd === offset) break;
    const valueEnd = packet.indexOf(0, nameEnd + 1);
    if (valueEnd < 0) throw new ProtocolViolation('invalid startup packet layout: expected terminator as last byte');
    const name = packet.toString('utf8', offset, nameEnd);
    const value = packet.toString('utf8', nameEnd + 1, valueEnd);
    if (name.startsWith('_pq_.')) protocolOptions.push(name);
    else parameters.set(name, value);
    offset = valueEnd + 1;
  }
  if (offset !== packet.length - 1) {
    throw new ProtocolViolation('invalid startup packet layout: expected terminator as last byte');
  }
  return { kind: 'startup', majorVersion, minorVersion, parameters, protocolOptions };
}
