/**
 * One-dimensional arrays, for `col = ANY($n)`: the text literal `{a,"b c",NULL}` and the binary
 * array format. Each element is a value of the column; NULL elements stay NULL. Anything else
 * (several dimensions, explicit bounds) is reported as unreadable so the caller refuses it.
 */

/** The elements of a text array literal, or undefined when it is not a one-dimensional array. */
export function parseTextArray(text: string): (string | null)[] | undefined {
  const source = text.trim();
  if (!source.startsWith('{') || !source.endsWith('}')) return undefined;
  const body = source.slice(1, -1);
  const elements: (string | null)[] = [];
  if (body.trim() === '') return elements;
  let i = 0;
  while (i <= body.length) {
    while (i < body.length && /\s/.test(body[i] as string)) i++;
    let value = '';
    let quoted = false;
    if (body[i] === '"') {
      quoted = true;
      i++;
      while (i < body.length && body[i] !== '"') {
        if (body[i] === '\\') i++;
        value += body[i] ?? '';
        i++;
      }
      if (body[i] !== '"') return undefined;
      i++;
      while (i < body.length && /\s/.test(body[i] as string)) i++;
    } else {
      while (i < body.length && body[i] !== ',') {
        const ch = body[i] as string;
        if (ch === '{' || ch === '}' || ch === '"') return undefined;
        if (ch === '\\') {
          i++;
          value += body[i] ?? '';
        } else {
          value += ch;
        }
        i++;
      }
      value = value.trim();
    }
    elements.push(!quoted && value.toUpperCase() === 'NULL' ? null : value);
    if (i >= body.length) break;
    if (body[i] !== ',') return undefined;
    i++;
  }
  return elements;
}

export function formatTextArray(elements: readonly (string | null)[]): string {
  const items = elements.map((element) => (element === null ? 'NULL' : `"${element.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`));
  return `{${items.join(',')}}`;
}

export interface BinaryArray {
  readonly elementType: number;
  readonly elements: (Buffer | null)[];
  readonly lowerBound: number;
}

export function parseBinaryArray(bytes: Buffer): BinaryArray | undefined {
  if (bytes.length < 12) return undefined;
  const dimensions = bytes.readInt32BE(0);
  const elementType = bytes.readInt32BE(8) >>> 0;
  if (dimensions === 0) return { elementType, elements: [], lowerBound: 1 };
  if (dimensions !== 1 || bytes.length < 20) return undefined;
  const count = bytes.readInt32BE(12);
  const lowerBound = bytes.readInt32BE(16);
  const elements: (Buffer | null)[] = [];
  let pos = 20;
  for (let i = 0; i < count; i++) {
    if (pos + 4 > bytes.length) return undefined;
    const length = bytes.readInt32BE(pos);
    pos += 4;
    if (length < 0) {
      elements.push(null);
      continue;
    }
    if (pos + length > bytes.length) return undefined;
    elements.push(bytes.subarray(pos, pos + length));
    pos += length;
  }
  return pos === bytes.length ? { elementType, elements, lowerBound } : undefined;
}

export function formatBinaryArray(array: BinaryArray): Buffer {
  if (array.elements.length === 0) {
    const empty = Buffer.alloc(12);
    empty.writeInt32BE(array.elementType | 0, 8);
    return empty;
  }
  const header = Buffer.alloc(20);
  header.writeInt32BE(1, 0);
  header.writeInt32BE(array.elements.some((element) => element === null) ? 1 : 0, 4);
  header.writeInt32BE(array.elementType | 0, 8);
  header.writeInt32BE(array.elements.length, 12);
  header.writeInt32BE(array.lowerBound, 16);
  const parts: Buffer[] = [header];
  for (const element of array.elements) {
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(element === null ? -1 : element.length, 0);
    parts.push(length);
    if (element !== null) parts.push(element);
  }
  return Buffer.concat(parts);
}
