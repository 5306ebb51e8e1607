import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { derPositiveInteger, generateSelfSignedCertificate } from '../../src/proxy/tls/selfSignedCertificate.js';

describe('self-signed certificate', () => {
  // Serials whose first bytes are zero or carry the high bit are the ones a naive DER writer
  // gets wrong (OpenSSL then refuses the certificate with "illegal padding").
  const awkwardSerials = [
    Buffer.alloc(16, 0),
    Buffer.from([0x00, 0x01, ...Buffer.alloc(14, 0xaa)]),
    Buffer.from([0x00, 0x00, 0x7f, ...Buffer.alloc(13, 0x11)]),
    Buffer.from([0x00, 0x80, ...Buffer.alloc(14, 0x22)]),
    Buffer.alloc(16, 0xff),
    Buffer.from([0x80, ...Buffer.alloc(15, 0)]),
  ];

  it.each(awkwardSerials.map((serial) => [serial.toString('hex'), serial]))('loads with serial %s', (_hex, serial) => {
    const { cert, key } = generateSelfSignedCertificate({ serialNumber: serial });
    const parsed = new X509Certificate(cert);
    expect(BigInt(`0x${parsed.serialNumber}`)).toBe(BigInt(`0x${serial.toString('hex')}`));
    expect(() => tls.createSecureContext({ cert, key })).not.toThrow();
    expect(parsed.verify(parsed.publicKey)).toBe(true);
  });

  it('encodes integers minimally and positive', () => {
    expect(derPositiveInteger(Buffer.from([0, 0, 5])).toString('hex')).toBe('020105');
    expect(derPositiveInteger(Buffer.from([0, 0x80])).toString('hex')).toBe('02020080');
    expect(derPositiveInteger(Buffer.from([0xff])).toString('hex')).toBe('020200ff');
    expect(derPositiveInteger(Buffer.from([0, 0])).toString('hex')).toBe('020100');
  });
});
