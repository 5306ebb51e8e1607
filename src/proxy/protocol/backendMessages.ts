/**
 * Writers for the backend messages the proxy itself sends to clients (handshake, errors).
 * Relayed messages never pass through here: they go on as the bytes PostgreSQL sent.
 */

/** The fields of an ErrorResponse or NoticeResponse, by their one-letter protocol code. */
export interface ErrorFields {
  severity: 'ERROR' | 'FATAL' | 'PANIC' | 'WARNING' | 'NOTICE';
  code: string;
  message: string;
  detail?: string;
  hint?: string;
}

export function typedMessage(type: string, body: Buffer): Buffer {
  const message = Buffer.allocUnsafe(5 + body.length);
  message[0] = type.charCodeAt(0);
  message.writeInt32BE(4 + body.length, 1);
  body.copy(message, 5);
  return message;
}

function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf8');
}

function int32(value: number): Buffer {
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeInt32BE(value, 0);
  return bytes;
}

export function errorResponse(fields: ErrorFields): Buffer {
  const parts = [
    Buffer.from('S'), cString(fields.severity),
    Buffer.from('V'), cString(fields.severity),
    Buffer.from('C'), cString(fields.code),
    Buffer.from('M'), cString(fields.message),
  ];
  if (fields.detail !== undefined) parts.push(Buffer.from('D'), cString(fields.detail));
  if (fields.hint !== undefined) parts.push(Buffer.from('H'), cString(fields.hint));
  parts.push(Buffer.from([0]));
  return typedMessage('E', Buffer.concat(parts));
}

export function authenticationOk(): Buffer {
  return typedMessage('R', int32(0));
}

export function authenticationCleartextPassword(): Buffer {
  return typedMessage('R', int32(3));
}

export function backendKeyData(processId: number, secretKey: number): Buffer {
  return typedMessage('K', Buffer.concat([int32(processId), int32(secretKey)]));
}

export function readyForQuery(status: 'I' | 'T' | 'E'): Buffer {
  return typedMessage('Z', Buffer.from(status));
}

/** Tells a client asking for protocol 3.x (x > 0) or `_pq_.` options that 3.0 is what it gets. */
export function negotiateProtocolVersion(minorVersion: number, unsupportedOptions: string[]): Buffer {
  return typedMessage('v', Buffer.concat([
    int32((3 << 16) | minorVersion),
    int32(unsupportedOptions.length),
    ...unsupportedOptions.map(cString),
  ]));
}
