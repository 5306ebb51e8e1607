/**
 * A Bind frame written in one allocation, byte for byte what bindMessage writes for the same
 * message; a value may be given as text, written as UTF-8 in place (a protected value need not
 * become a Buffer of its own first).
 */
import type { BindMessage } from '../../protocol/messageReaders.js';

export type BindValue = Buffer | string | null;

export function bindFrame(bind: BindMessage, paramFormats: readonly number[], values: readonly BindValue[]): Buffer {
  const { portal, statement, resultFormats } = bind;
  const portalBytes = Buffer.byteLength(portal, 'utf8');
  const statementBytes = Buffer.byteLength(statement, 'utf8');
  const lengths = new Array<number>(values.length);
  let size = 1 + 4 + portalBytes + 1 + statementBytes + 1 + 2 + 2 * paramFormats.length + 2 + 2 + 2 * resultFormats.length;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const length = value === null || value === undefined ? -1 : typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length;
    lengths[i] = length;
    size += 4 + Math.max(length, 0);
  }
  const frame = Buffer.allocUnsafe(size);
  frame[0] = 0x42; // 'B'
  let at = frame.writeInt32BE(size - 1, 1);
  at += frame.write(portal, at, portalBytes, 'utf8');
  frame[at++] = 0;
  at += frame.write(statement, at, statementBytes, 'utf8');
  frame[at++] = 0;
  at = frame.writeUInt16BE(paramFormats.length, at);
  for (const format of paramFormats) at = frame.writeInt16BE(format, at);
  at = frame.writeUInt16BE(values.length, at);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const length = lengths[i] as number;
    at = frame.writeInt32BE(length, at);
    if (typeof value === 'string') at += frame.write(value, at, length, 'utf8');
    else if (value !== null && value !== undefined) at += value.copy(frame, at);
  }
  at = frame.writeUInt16BE(resultFormats.length, at);
  for (const format of resultFormats) at = frame.writeInt16BE(format, at);
  // The frame comes from the shared pool: a byte left unwritten would leak another message's.
  if (at !== size) throw new Error(`Bind frame written to ${at} of ${size} bytes`);
  return frame;
}
