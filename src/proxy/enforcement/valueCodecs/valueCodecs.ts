/**
 * Binary wire format ↔ text for the types a protected column can have. The engine works on text
 * only (dates as ISO `YYYY-MM-DD`, which the date kind keeps); a binary value is decoded, protected
 * or unprotected as text, and encoded back in the type's binary form.
 */

export const TYPE_OIDS = {
  name: 19, int8: 20, int2: 21, int4: 23, text: 25, unknown: 705, bpchar: 1042, varchar: 1043,
  date: 1082, numeric: 1700, uuid: 2950, inet: 869, cidr: 650,
} as const;

const TEXT_LIKE = new Set<number>([TYPE_OIDS.name, TYPE_OIDS.text, TYPE_OIDS.unknown, TYPE_OIDS.bpchar, TYPE_OIDS.varchar]);

/** Array type OID → element type OID, for `col = ANY($n)` parameters. */
export const ARRAY_ELEMENT_TYPES: ReadonlyMap<number, number> = new Map([
  [1003, TYPE_OIDS.name], [1016, TYPE_OIDS.int8], [1005, TYPE_OIDS.int2], [1007, TYPE_OIDS.int4],
  [1009, TYPE_OIDS.text], [1014, TYPE_OIDS.bpchar], [1015, TYPE_OIDS.varchar], [1182, TYPE_OIDS.date],
  [1231, TYPE_OIDS.numeric], [2951, TYPE_OIDS.uuid], [1041, TYPE_OIDS.inet], [651, TYPE_OIDS.cidr],
]);

const DAY_MS = 86_400_000;
const EPOCH_2000 = Date.UTC(2000, 0, 1);

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

function decodeDate(bytes: Buffer): string | undefined {
  if (bytes.length !== 4) return undefined;
  const days = bytes.readInt32BE(0);
  if (days === 0x7fffffff || days === -0x80000000) return undefined; // ±infinity: not a date value
  const date = new Date(EPOCH_2000 + days * DAY_MS);
  const year = date.getUTCFullYear();
  if (year < 1 || year > 9999) return undefined;
  return `${pad(year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}`;
}

function encodeDate(text: string): Buffer | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const time = new Date(0);
  time.setUTCFullYear(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  time.setUTCHours(0, 0, 0, 0);
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeInt32BE(Math.round((time.getTime() - EPOCH_2000) / DAY_MS), 0);
  return bytes;
}

function decodeUuid(bytes: Buffer): string | undefined {
  if (bytes.length !== 16) return undefined;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function encodeUuid(text: string): Buffer | undefined {
  const hex = text.replace(/[{}-]/g, '');
  return /^[0-9a-fA-F]{32}$/.test(hex) ? Buffer.from(hex, 'hex') : undefined;
}

const AF_INET = 2;
const AF_INET6 = 3;

function decodeInet(bytes: Buffer, cidr: boolean): string | undefined {
  if (bytes.length < 4) return undefined;
  const family = bytes[0];
  const bits = bytes[1] as number;
  const size = bytes[3] as number;
  if (bytes.length !== 4 + size) return undefined;
  const address = bytes.subarray(4);
  let text: string;
  let full: number;
  if (family === AF_INET && size === 4) {
    text = [...address].join('.');
    full = 32;
  } else if (family === AF_INET6 && size === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(address.readUInt16BE(i).toString(16));
    text = groups.join(':');
    full = 128;
  } else {
    return undefined;
  }
  return cidr || bits !== full ? `${text}/${bits}` : text;
}

function encodeInet(text: string, cidr: boolean): Buffer | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(text);
  if (!match) return undefined;
  const octets = match.slice(1, 5).map(Number);
  if (octets.some((octet) => octet > 255)) return undefined;
  const bits = match[5] === undefined ? 32 : Number(match[5]);
  if (bits > 32) return undefined;
  return Buffer.from([AF_INET, bits, cidr ? 1 : 0, 4, ...octets]);
}

const NUMERIC_NEG = 0x4000;

function decodeNumeric(bytes: Buffer): string | undefined {
  if (bytes.length < 8) return undefined;
  const ndigits = bytes.readInt16BE(0);
  const weight = bytes.readInt16BE(2);
  const sign = bytes.readUInt16BE(4);
  const dscale = bytes.readInt16BE(6);
  if ((sign !== 0 && sign !== NUMERIC_NEG) || bytes.length !== 8 + 2 * ndigits) return undefined;
  const digits: number[] = [];
  for (let i = 0; i < ndigits; i++) digits.push(bytes.readInt16BE(8 + 2 * i));
  let integer = '';
  for (let i = 0; i <= weight; i++) {
    const group = digits[i] ?? 0;
    integer += i === 0 ? String(group) : pad(group, 4);
  }
  if (integer === '') integer = '0';
  let fraction = '';
  for (let i = weight + 1; fraction.length < dscale; i++) fraction += pad(i < 0 ? 0 : digits[i] ?? 0, 4);
  fraction = fraction.slice(0, dscale);
  const body = dscale > 0 ? `${integer}.${fraction}` : integer;
  return sign === NUMERIC_NEG ? `-${body}` : body;
}

function encodeNumeric(text: string): Buffer | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return undefined;
  const negative = match[1] === '-';
  const integer = (match[2] as string).replace(/^0+/, '');
  const fraction = match[3] ?? '';
  const dscale = fraction.length;
  const intPadded = integer.padStart(Math.ceil(integer.length / 4) * 4, '0');
  const fracPadded = fraction.padEnd(Math.ceil(fraction.length / 4) * 4, '0');
  const groups: number[] = [];
  for (let i = 0; i < intPadded.length; i += 4) groups.push(Number(intPadded.slice(i, i + 4)));
  for (let i = 0; i < fracPadded.length; i += 4) groups.push(Number(fracPadded.slice(i, i + 4)));
  let weight = intPadded.length / 4 - 1;
  while (groups.length > 0 && groups[0] === 0) {
    groups.shift();
    weight--;
  }
  while (groups.length > 0 && groups[groups.length - 1] === 0) groups.pop();
  if (groups.length === 0) weight = 0;
  const bytes = Buffer.alloc(8 + 2 * groups.length);
  bytes.writeInt16BE(groups.length, 0);
  bytes.writeInt16BE(weight, 2);
  bytes.writeUInt16BE(negative && groups.length > 0 ? NUMERIC_NEG : 0, 4);
  bytes.writeInt16BE(dscale, 6);
  groups.forEach((group, i) => bytes.writeInt16BE(group, 8 + 2 * i));
  return bytes;
}

function decodeInteger(bytes: Buffer): string | undefined {
  if (bytes.length === 2) return String(bytes.readInt16BE(0));
  if (bytes.length === 4) return String(bytes.readInt32BE(0));
  if (bytes.length === 8) return String(bytes.readBigInt64BE(0));
  return undefined;
}

function encodeInteger(text: string, size: number): Buffer | undefined {
  if (!/^[+-]?\d+$/.test(text.trim())) return undefined;
  const value = BigInt(text.trim());
  const bytes = Buffer.allocUnsafe(size);
  try {
    if (size === 2) bytes.writeInt16BE(Number(value), 0);
    else if (size === 4) bytes.writeInt32BE(Number(value), 0);
    else bytes.writeBigInt64BE(value, 0);
  } catch {
    return undefined;
  }
  return bytes;
}

const BINARY_TYPES = new Set<number>([
  ...TEXT_LIKE, TYPE_OIDS.date, TYPE_OIDS.uuid, TYPE_OIDS.inet, TYPE_OIDS.cidr, TYPE_OIDS.numeric, TYPE_OIDS.int2, TYPE_OIDS.int4, TYPE_OIDS.int8,
]);

/** True when the type's binary form is its text in UTF-8 (any string fits, a mask too). */
export function isTextLike(typeOid: number): boolean {
  return TEXT_LIKE.has(typeOid);
}

/** True when decodeBinary / encodeBinary read and write values of this type. */
export function hasBinaryCodec(typeOid: number): boolean {
  return BINARY_TYPES.has(typeOid);
}

/** The text form of a binary value of `typeOid`; undefined when the type or bytes are not supported. */
export function decodeBinary(typeOid: number, bytes: Buffer): string | undefined {
  if (TEXT_LIKE.has(typeOid)) return bytes.toString('utf8');
  switch (typeOid) {
    case TYPE_OIDS.date: return decodeDate(bytes);
    case TYPE_OIDS.uuid: return decodeUuid(bytes);
    case TYPE_OIDS.inet: return decodeInet(bytes, false);
    case TYPE_OIDS.cidr: return decodeInet(bytes, true);
    case TYPE_OIDS.numeric: return decodeNumeric(bytes);
    case TYPE_OIDS.int2: case TYPE_OIDS.int4: case TYPE_OIDS.int8: return decodeInteger(bytes);
    default: return undefined;
  }
}

/** The binary form of `text` as a `typeOid` value; undefined when it is not one. */
export function encodeBinary(typeOid: number, text: string): Buffer | undefined {
  if (TEXT_LIKE.has(typeOid)) return Buffer.from(text, 'utf8');
  switch (typeOid) {
    case TYPE_OIDS.date: return encodeDate(text);
    case TYPE_OIDS.uuid: return encodeUuid(text);
    case TYPE_OIDS.inet: return encodeInet(text, false);
    case TYPE_OIDS.cidr: return encodeInet(text, true);
    case TYPE_OIDS.numeric: return encodeNumeric(text);
    case TYPE_OIDS.int2: return encodeInteger(text, 2);
    case TYPE_OIDS.int4: return encodeInteger(text, 4);
    case TYPE_OIDS.int8: return encodeInteger(text, 8);
    default: return undefined;
  }
}
