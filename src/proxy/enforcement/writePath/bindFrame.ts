/**
 * A Bind frame written in one allocation, byte for byte what bindMessage writes for the same
 * message; a value may be given as text, written as UTF-8 in place (a protected value need not
 * become a Buffer of its own first).
 */
import type { BindMessage, BindValueLayout } from '../../protocol/messageReaders.js';

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

/**
 * The Bind `frame` with the values of `replaced` (undefined: keep the one sent) written in place
 * of those sent, everything else copied: byte for byte what bindFrame gives for the same message,
 * without reading every value out and writing it back.
 */
export function splicedBindFrame(frame: Buffer, layout: BindValueLayout, replaced: readonly (BindValue | undefined)[]): Buffer {
  const { starts, lengths, valuesAt, valuesEnd, resultsEnd } = layout;
  const count = starts.length;
  const newLengths = new Array<number>(count);
  let size = valuesAt + 2 + (resultsEnd - valuesEnd);
  for (let i = 0; i < count; i++) {
    const value = replaced[i];
    const length = value === undefined ? (lengths[i] as number)
      : value === null ? -1 : typeof value === 'string' ? utf8Length(value) : value.length;
    newLengths[i] = length;
    size += 4 + Math.max(length, 0);
  }
  const out = Buffer.allocUnsafe(size);
  copyBytes(frame, 0, valuesAt + 2, out, 0);
  out.writeInt32BE(size - 1, 1);
  let at = valuesAt + 2;
  for (let i = 0; i < count; i++) {
    const value = replaced[i];
    const length = newLengths[i] as number;
    at = out.writeInt32BE(length, at);
    if (length <= 0) continue;
    if (value === undefined) at = copyBytes(frame, starts[i] as number, length, out, at);
    else if (typeof value === 'string') at = writeText(value, length, out, at);
    else if (value !== null) at = copyBytes(value, 0, length, out, at);
  }
  at = copyBytes(frame, valuesEnd, resultsEnd - valuesEnd, out, at);
  // The frame comes from the shared pool: a byte left unwritten would leak another message's.
  if (at !== size) throw new Error(`Bind frame written to ${at} of ${size} bytes`);
  return out;
}

/** Copies `length` bytes; returns where the copy ends in `target`. A loop for the few bytes of a header or a value. */
function copyBytes(source: Uint8Array, from: number, length: number, target: Buffer, at: number): number {
  if (length > 64) {
    target.set(source.subarray(from, from + length), at);
    return at + length;
  }
  for (let i = 0; i < length; i++) target[at + i] = source[from + i] as number;
  return at + length;
}

/** Protected values are short and mostly ASCII: their bytes are their character codes, counted and written without a native call. */
const SHORT_TEXT = 64;

function utf8Length(text: string): number {
  if (text.length > SHORT_TEXT) return Buffer.byteLength(text, 'utf8');
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return Buffer.byteLength(text, 'utf8');
  return text.length;
}

/** Writes `text` (`length` UTF-8 bytes); returns where it ends. */
function writeText(text: string, length: number, target: Buffer, at: number): number {
  if (length !== text.length || length > SHORT_TEXT) return at + target.write(text, at, length, 'utf8');
  for (let i = 0; i < length; i++) target[at + i] = text.charCodeAt(i);
  return at + length;
}
