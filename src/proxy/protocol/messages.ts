/**
 * Every protocol message the proxy writes itself: to clients (handshake, errors, rewritten rows) and
 * to PostgreSQL (login, cancel, rewritten or replacement messages). Relayed messages the hooks leave
 * alone never pass through here: they go on as the bytes their sender wrote.
 */
import { FrameWriter } from './frameWriter.js';
import type { BindMessage, FieldDescription, ParseMessage } from './messageReaders.js';

export const PROTOCOL_VERSION_3_0 = 196608;
export const SSL_REQUEST_CODE = 80877103;
export const GSSENC_REQUEST_CODE = 80877104;
export const CANCEL_REQUEST_CODE = 80877102;

/** The fields of an ErrorResponse or NoticeResponse, by their one-letter protocol code. */
export interface ErrorFields {
  severity: 'ERROR' | 'FATAL' | 'PANIC' | 'WARNING' | 'NOTICE';
  code: string;
  message: string;
  detail?: string;
  hint?: string;
}

/** A frame of `type` around a body read elsewhere (e.g. a handshake message passed on). */
export function typedMessage(type: string, body: Uint8Array): Buffer {
  return new FrameWriter(type, 5 + body.length).bytes(body).finish();
}

// Server → client.

export function errorResponse(fields: ErrorFields): Buffer {
  const writer = new FrameWriter('E', 128)
    .byte(0x53).cString(fields.severity) // S
    .byte(0x56).cString(fields.severity) // V
    .byte(0x43).cString(fields.code) // C
    .byte(0x4d).cString(fields.message); // M
  if (fields.detail !== undefined) writer.byte(0x44).cString(fields.detail); // D
  if (fields.hint !== undefined) writer.byte(0x48).cString(fields.hint); // H
  return writer.byte(0).finish();
}

export function authenticationOk(): Buffer {
  return new FrameWriter('R', 9).int32(0).finish();
}

export function authenticationCleartextPassword(): Buffer {
  return new FrameWriter('R', 9).int32(3).finish();
}

export function backendKeyData(processId: number, secretKey: number): Buffer {
  return new FrameWriter('K', 13).int32(processId).int32(secretKey).finish();
}

export function readyForQuery(status: 'I' | 'T' | 'E'): Buffer {
  return new FrameWriter('Z', 6).byte(status.charCodeAt(0)).finish();
}

/** Tells a client asking for protocol 3.x (x > 0) or `_pq_.` options that 3.0 is what it gets. */
export function negotiateProtocolVersion(minorVersion: number, unsupportedOptions: readonly string[]): Buffer {
  const writer = new FrameWriter('v').int32((3 << 16) | minorVersion).int32(unsupportedOptions.length);
  for (const option of unsupportedOptions) writer.cString(option);
  return writer.finish();
}

/** A RowDescription of `fields` (type length written as -1: varying). */
export function rowDescriptionMessage(fields: readonly FieldDescription[]): Buffer {
  const writer = new FrameWriter('T').count(fields.length);
  for (const field of fields) {
    writer.cString(field.name).int32(field.tableOid | 0).int16(field.attnum).int32(field.typeOid | 0)
      .int16(-1).int32(field.typmod).int16(field.format);
  }
  return writer.finish();
}

export function parameterDescriptionMessage(typeOids: readonly number[]): Buffer {
  const writer = new FrameWriter('t', 7 + 4 * typeOids.length).count(typeOids.length);
  for (const oid of typeOids) writer.int32(oid | 0);
  return writer.finish();
}

/** A DataRow from field values (null for NULL). */
export function dataRowMessage(values: readonly (Uint8Array | null)[]): Buffer {
  // The exact size up front: one allocation, no growth (the read path's hot loop).
  let size = 7;
  for (const value of values) size += 4 + (value === null ? 0 : value.length);
  const writer = new FrameWriter('D', size).count(values.length);
  for (const value of values) {
    if (value === null) writer.int32(-1);
    else writer.int32(value.length).bytes(value);
  }
  return writer.finish();
}

export function commandCompleteMessage(tag: string): Buffer {
  return new FrameWriter('C').cString(tag).finish();
}

// Both directions.

export function copyDataMessage(data: Uint8Array): Buffer {
  return new FrameWriter('d', 5 + data.length).bytes(data).finish();
}

// Client → server.

export function startupMessage(parameters: ReadonlyMap<string, string>): Buffer {
  const writer = new FrameWriter(null, 128).int32(PROTOCOL_VERSION_3_0);
  for (const [name, value] of parameters) writer.cString(name).cString(value);
  return writer.byte(0).finish();
}

export function sslRequest(): Buffer {
  return new FrameWriter(null, 8).int32(SSL_REQUEST_CODE).finish();
}

export function cancelRequest(processId: number, secretKey: Uint8Array): Buffer {
  return new FrameWriter(null, 12 + secretKey.length).int32(CANCEL_REQUEST_CODE).int32(processId).bytes(secretKey).finish();
}

export function passwordMessage(password: string): Buffer {
  return new FrameWriter('p').cString(password).finish();
}

export function saslInitialResponse(mechanism: string, data: Uint8Array): Buffer {
  return new FrameWriter('p').cString(mechanism).int32(data.length).bytes(data).finish();
}

export function saslResponse(data: Uint8Array): Buffer {
  return typedMessage('p', data);
}

export function terminate(): Buffer {
  return new FrameWriter('X', 5).finish();
}

export function queryMessage(sql: string): Buffer {
  return new FrameWriter('Q', 6 + sql.length).cString(sql).finish();
}

export function parseMessage(message: ParseMessage): Buffer {
  const writer = new FrameWriter('P').cString(message.name).cString(message.sql).count(message.paramTypes.length);
  for (const oid of message.paramTypes) writer.int32(oid | 0);
  return writer.finish();
}

export function bindMessage(message: BindMessage): Buffer {
  let size = 13 + 2 * (message.paramFormats.length + message.resultFormats.length) + message.portal.length + message.statement.length;
  for (const value of message.values) size += 4 + (value === null ? 0 : value.length);
  const writer = new FrameWriter('B', size).cString(message.portal).cString(message.statement);
  writer.count(message.paramFormats.length);
  for (const format of message.paramFormats) writer.int16(format);
  writer.count(message.values.length);
  for (const value of message.values) {
    if (value === null) writer.int32(-1);
    else writer.int32(value.length).bytes(value);
  }
  writer.count(message.resultFormats.length);
  for (const format of message.resultFormats) writer.int16(format);
  return writer.finish();
}

export function describeMessage(target: 'S' | 'P', name: string): Buffer {
  return new FrameWriter('D').byte(target.charCodeAt(0)).cString(name).finish();
}

export function copyFailMessage(reason: string): Buffer {
  return new FrameWriter('f').cString(reason).finish();
}

/** A FunctionCall of a function that does not exist (OID 0): fails upstream like a refused call would. */
export function failingFunctionCall(): Buffer {
  return new FrameWriter('F', 15).int32(0).int16(0).int16(0).int16(0).finish();
}
