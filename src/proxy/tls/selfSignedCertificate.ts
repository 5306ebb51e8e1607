/**
 * Generates a self-signed X.509 certificate (ECDSA P-256) on node:crypto alone, for local use
 * when no certificate is configured. The certificate is its own CA (basicConstraints CA:TRUE), so a
 * client can verify it with `sslrootcert` set to the same PEM.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

export interface CertificatePair {
  cert: string;
  key: string;
}

export interface SelfSignedOptions {
  commonName?: string;
  /** DNS names and IP addresses (IPv4 or IPv6) for subjectAltName. */
  altNames?: string[];
  days?: number;
  /** Serial number bytes (unsigned, big-endian); 16 random bytes by default. */
  serialNumber?: Buffer;
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
const explicit = (tagNumber: number, item: Buffer): Buffer => tlv(0xa0 | tagNumber, item);
const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [40 * (parts[0] as number) + (parts[1] as number)];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f];
    for (let rest = Math.floor(part / 128); rest > 0; rest = Math.floor(rest / 128)) chunk.unshift(0x80 | (rest & 0x7f));
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/**
 * A DER INTEGER for unsigned big-endian bytes: minimal (no redundant leading zero bytes, which
 * OpenSSL refuses as "illegal padding") and positive (a zero byte in front of a high bit).
 */
export function derPositiveInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1;
  const digits = bytes.length === 0 ? Buffer.from([0]) : bytes.subarray(start);
  const sign = ((digits[0] as number) & 0x80) !== 0 ? Buffer.from([0]) : Buffer.alloc(0);
  return tlv(0x02, sign, digits);
}

function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
    : headGroups;
  const bytes = Buffer.alloc(16);
  groups.forEach((group, i) => bytes.writeUInt16BE(parseInt(group, 16), i * 2));
  return bytes;
}

export function generateSelfSignedCertificate(options: SelfSignedOptions = {}): CertificatePair {
  const commonName = options.commonName ?? 'localhost';
  const altNames = options.altNames ?? ['localhost', '127.0.0.1', '::1'];
  const days = options.days ?? 365;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8String(commonName))));
  const now = Date.now();
  const validity = sequence(time(new Date(now - 60_000)), time(new Date(now + days * 86_400_000)));
  const generalNames = altNames.map((alt) => (isIP(alt) ? tlv(0x87, ipBytes(alt)) : tlv(0x82, Buffer.from(alt, 'ascii'))));
  const extensions = explicit(3, sequence(
    sequence(oid('2.5.29.19'), tlv(0x01, Buffer.from([0xff])), octetString(sequence(tlv(0x01, Buffer.from([0xff]))))),
    sequence(oid('2.5.29.17'), octetString(sequence(...generalNames))),
  ));
  const tbsCertificate = sequence(
    explicit(0, tlv(0x02, Buffer.from([2]))),
    derPositiveInteger(options.serialNumber ?? randomBytes(16)),
    ecdsaWithSha256,
    name,
    validity,
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbsCertificate, privateKey);
  const certificate = sequence(tbsCertificate, ecdsaWithSha256, tlv(0x03, Buffer.from([0]), signature));
  const base64 = certificate.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
