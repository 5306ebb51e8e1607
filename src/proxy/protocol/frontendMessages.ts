/** Writers for the frontend messages the proxy itself sends to PostgreSQL (handshake, cancel). */
import { typedMessage } from './backendMessages.js';

export const PROTOCOL_VERSION_3_0 = 196608;
export const SSL_REQUEST_CODE = 80877103;
export const GSSENC_REQUEST_CODE = 80877104;
export const CANCEL_REQUEST_CODE = 80877102;

function untypedPacket(code: number, body: Buffer): Buffer {
  const packet = Buffer.allocUnsafe(8 + body.length);
  packet.writeInt32BE(8 + body.length, 0);
  packet.writeInt32BE(code, 4);
  body.copy(packet, 8);
  return packet;
}

export function startupMessage(parameters: ReadonlyMap<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of parameters) parts.push(Buffer.from(`${name}\0${value}\0`, 'utf8'));
  parts.push(Buffer.from([0]));
  return untypedPacket(PROTOCOL_VERSION_3_0, Buffer.concat(parts));
}

export function sslRequest(): Buffer {
  return untypedPacket(SSL_REQUEST_CODE, Buffer.alloc(0));
}

export function cancelRequest(processId: number, secretKey: Buffer): Buffer {
  const ids = Buffer.allocUnsafe(4);
  ids.writeInt32BE(processId, 0);
  return untypedPacket(CANCEL_REQUEST_CODE, Buffer.concat([ids, secretKey]));
}

export function passwordMessage(password: string): Buffer {
  return typedMessage('p', Buffer.from(`${password}\0`, 'utf8'));
}

export function saslInitialResponse(mechanism: string, data: Buffer): Buffer {
  const length = Buffer.allocUnsafe(4);
  length.writeInt32BE(data.length, 0);
  return typedMessage('p', Buffer.concat([Buffer.from(`${mechanism}\0`, 'utf8'), length, data]));
}

export function saslResponse(data: Buffer): Buffer {
  return typedMessage('p', data);
}

export function terminate(): Buffer {
  return typedMessage('X', Buffer.alloc(0));
}
