/**
 * The client's first packets: SSLRequest (TLS termination), GSSENCRequest (always 'N'),
 * CancelRequest, then the StartupMessage.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { HandshakeReader } from '../protocol/handshakeReader.js';
import { parseStartupPacket, ProtocolViolation, type StartupPacket } from '../protocol/startupPacket.js';
import { SMALL_MESSAGE_LIMIT } from '../protocol/messageLimits.js';

export type StartupMessagePacket = Extract<StartupPacket, { kind: 'startup' }>;

export type ClientStartup =
  | { kind: 'cancel'; processId: number; secretKey: Buffer }
  | { kind: 'startup'; socket: Duplex; reader: HandshakeReader; startup: StartupMessagePacket; encrypted: boolean };

/** `onSocket` learns of the TLS socket as soon as it exists, so the caller can close it on timeout. */
export async function negotiateClientStartup(
  socket: Socket,
  tlsContext: tls.SecureContext | null,
  onSocket: (socket: Duplex) => void,
): Promise<ClientStartup> {
  let current: Duplex = socket;
  let reader = new HandshakeReader(socket, SMALL_MESSAGE_LIMIT);
  let encrypted = false;
  let askedGss = false;
  for (;;) {
    const packet = parseStartupPacket(await reader.readStartupPacket());
    switch (packet.kind) {
      case 'cancel':
        reader.detach();
        return { kind: 'cancel', processId: packet.processId, secretKey: packet.secretKey };
      case 'startup':
        return { kind: 'startup', socket: current, reader, startup: packet, encrypted };
      case 'gssenc':
        if (encrypted || askedGss) throw new ProtocolViolation('unexpected GSSENCRequest');
        askedGss = true;
        current.write('N');
        break;
      case 'ssl': {
        if (encrypted) throw new ProtocolViolation('unexpected SSLRequest inside an encrypted connection');
        if (tlsContext === null) {
          current.write('N');
          break;
        }
        // Bytes sent before the TLS handshake would be trusted as if encrypted (CVE-2021-23214): refuse.
        if (reader.detach(false).length > 0) throw new ProtocolViolation('received unencrypted data after SSL request');
        socket.write('S');
        current = await startTls(socket, tlsContext);
        onSocket(current);
        reader = new HandshakeReader(current, SMALL_MESSAGE_LIMIT);
        encrypted = true;
        break;
      }
    }
  }
}

function startTls(socket: Socket, secureContext: tls.SecureContext): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = new tls.TLSSocket(socket, { isServer: true, secureContext });
    const onError = (error: Error): void => {
      secure.destroy();
      reject(error);
    };
    secure.once('error', onError);
    secure.once('secure', () => {
      secure.off('error', onError);
      resolve(secure);
    });
  });
}
