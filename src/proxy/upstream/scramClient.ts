/**
 * The client side of SCRAM-SHA-256 (RFC 5802/7677) as PostgreSQL speaks it: no channel binding,
 * the user name left empty (PostgreSQL takes it from the startup packet).
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const pbkdf2Async = promisify(pbkdf2);

export class ScramError extends Error {
  override readonly name = 'ScramError';
}

/** Salted passwords by salt and iteration count: the upstream password is fixed, so reconnects skip PBKDF2. */
export type SaltedPasswordCache = Map<string, Buffer>;

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

function attributes(message: string): Map<string, string> {
  const parsed = new Map<string, string>();
  for (const part of message.split(',')) {
    if (part.length >= 2 && part[1] === '=') parsed.set(part[0] as string, part.slice(2));
  }
  return parsed;
}

export class ScramSha256Client {
  private readonly clientNonce = randomBytes(18).toString('base64');
  private readonly clientFirstBare = `n=,r=${this.clientNonce}`;
  private expectedServerSignature: Buffer | null = null;

  constructor(
    private readonly password: string,
    private readonly cache: SaltedPasswordCache = new Map(),
  ) {}

  clientFirstMessage(): Buffer {
    return Buffer.from(`n,,${this.clientFirstBare}`, 'utf8');
  }

  async clientFinalMessage(serverFirst: Buffer): Promise<Buffer> {
    const serverFirstText = serverFirst.toString('utf8');
    const attrs = attributes(serverFirstText);
    const nonce = attrs.get('r');
    const saltText = attrs.get('s');
    const iterations = Number(attrs.get('i'));
    if (!nonce || !nonce.startsWith(this.clientNonce) || nonce.length === this.clientNonce.length) {
      throw new ScramError('SCRAM: server nonce does not extend the client nonce');
    }
    if (!saltText || !Number.isInteger(iterations) || iterations < 1) {
      throw new ScramError('SCRAM: malformed server-first-message');
    }
    const cacheKey = `${saltText}:${iterations}`;
    let salted = this.cache.get(cacheKey);
    if (!salted) {
      salted = await pbkdf2Async(this.password.normalize('NFKC'), Buffer.from(saltText, 'base64'), iterations, 32, 'sha256');
      this.cache.set(cacheKey, salted);
    }
    const clientKey = hmac(salted, 'Client Key');
    const storedKey = createHash('sha256').update(clientKey).digest();
    const finalWithoutProof = `c=biws,r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirstText},${finalWithoutProof}`;
    const signature = hmac(storedKey, authMessage);
    const proof = Buffer.alloc(clientKey.length);
    for (let i = 0; i < proof.length; i++) proof[i] = (clientKey[i] as number) ^ (signature[i] as number);
    this.expectedServerSignature = hmac(hmac(salted, 'Server Key'), authMessage);
    return Buffer.from(`${finalWithoutProof},p=${proof.toString('base64')}`, 'utf8');
  }

  verifyServerFinal(serverFinal: Buffer): void {
    const attrs = attributes(serverFinal.toString('utf8'));
    if (attrs.has('e')) throw new ScramError(`SCRAM: server error ${attrs.get('e')}`);
    const received = Buffer.from(attrs.get('v') ?? '', 'base64');
    const expected = this.expectedServerSignature;
    if (!expected || received.length !== expected.length || !timingSafeEqual(received, expected)) {
      throw new ScramError('SCRAM: the server signature does not match');
    }
  }
}
