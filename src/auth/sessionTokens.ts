import { createHash, createHmac, randomBytes, timingSafeEqual, webcrypto } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTHeaderParameters } from 'jose';
import type { AccountConfig } from '../config/index.js';
import type { Keyring } from '../keys/index.js';
import { AuthError } from './authErrors.js';
import type { Clock } from './clock.js';

/** The seed: both tokens live 24 hours. */
export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/** Keyring purpose labels: auth keys are derived apart from every protection key. */
const JWT_PURPOSE = 'auth-jwt';
const SVC_PURPOSE = 'auth-svc';
const ISSUER = 'pgveil';
const AUDIENCE = 'pgveil-api';
const SVC_PREFIX = 'svc1';
/** svc1.<key version>.<jti>.<exp seconds>.<mac> */
const SVC_PATTERN = /^svc1\.(\d{1,2})\.([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

export interface SessionClaims {
  email: string;
  /** Roles at login time; informative only, the configuration decides. */
  roles: string[];
  jti: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
  keyVersion: number;
}

export interface IssuedTokens {
  jwtToken: string;
  svcToken: string;
  claims: SessionClaims;
}

interface SvcParts {
  keyVersion: number;
  jti: string;
  expiresAt: number;
  mac: Buffer;
}

function expired(): AuthError {
  return new AuthError('unauthorized', 'the session tokens have expired; log in again');
}
function invalid(): AuthError {
  return new AuthError('unauthorized', 'invalid credentials');
}

/**
 * Issues and checks the login's token pair without any session table, so every instance with the
 * same keys accepts them:
 * - jwt_token: HS256 JWT (sub = email, jti, iat, exp = iat + 24 h, kid = key version);
 * - svc_token: an HMAC, under a second derived key, over the same jti, email and expiry plus a
 *   fingerprint of the account's password hash. The pair therefore comes from one login, and a
 *   password change ends all sessions of the account.
 */
export class SessionTokens {
  private readonly jwtKeys = new Map<number, Promise<webcrypto.CryptoKey>>();
  /**
   * Claims of JWTs whose signature was already verified, by exact token text: signature checks
   * through WebCrypto cost more than the rest of a one-value request. Expiry is still checked on
   * every use, and the account, API key and svc_token are checked by the caller every time.
   */
  private readonly verified = new Map<string, SessionClaims>();
  private static readonly VERIFIED_LIMIT = 10_000;

  constructor(private readonly keyring: Keyring, private readonly clock: Clock) {}

  private jwtKey(version: number): Promise<webcrypto.CryptoKey> {
    let key = this.jwtKeys.get(version);
    if (!key) {
      // Imported once per version: jose would otherwise import a raw key on every verification.
      key = webcrypto.subtle.importKey('raw', this.keyring.subkey(JWT_PURPOSE, '', '', version),
        { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
      this.jwtKeys.set(version, key);
    }
    return key;
  }

  private svcMac(version: number, jti: string, email: string, expiresAt: number, account: AccountConfig): Buffer {
    const credential = createHash('sha256').update(account.passwordHash).digest('base64');
    return createHmac('sha256', this.keyring.subkey(SVC_PURPOSE, '', '', version))
      .update(`pgveil-svc/v1\u0000${jti}\u0000${email}\u0000${expiresAt}\u0000${credential}`)
      .digest();
  }

  private nowSeconds(): number {
    return Math.floor(this.clock() / 1000);
  }

  async issue(account: AccountConfig): Promise<IssuedTokens> {
    const version = this.keyring.currentVersion;
    const issuedAt = this.nowSeconds();
    const expiresAt = issuedAt + TOKEN_LIFETIME_SECONDS;
    const jti = randomBytes(16).toString('base64url');
    const jwtToken = await new SignJWT({ roles: account.roles })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: String(version) })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(account.email)
      .setJti(jti)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(await this.jwtKey(version));
    const mac = this.svcMac(version, jti, account.email, expiresAt, account);
    const svcToken = `${SVC_PREFIX}.${version}.${jti}.${expiresAt}.${mac.toString('base64url')}`;
    return { jwtToken, svcToken, claims: { email: account.email, roles: account.roles, jti, issuedAt, expiresAt, keyVersion: version } };
  }

  /** Checks signature, issuer, audience and expiry. Throws AuthError (401). */
  async verifyJwt(token: string): Promise<SessionClaims> {
    const known = this.verified.get(token);
    if (known) {
      if (known.expiresAt > this.nowSeconds()) return known;
      this.verified.delete(token);
      throw expired();
    }
    const claims = await this.verifyJwtSignature(token);
    if (this.verified.size >= SessionTokens.VERIFIED_LIMIT) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(token, claims);
    return claims;
  }

  private async verifyJwtSignature(token: string): Promise<SessionClaims> {
    let keyVersion = 0;
    const getKey = (header: JWTHeaderParameters): Promise<webcrypto.CryptoKey> => {
      const v = Number(header.kid);
      if (!Number.isInteger(v) || !this.keyring.hasVersion(v)) throw invalid();
      keyVersion = v;
      return this.jwtKey(v);
    };
    try {
      const { payload } = await jwtVerify(token, getKey, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: new Date(this.clock()),
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      });
      const roles = Array.isArray(payload['roles']) ? payload['roles'].filter((r): r is string => typeof r === 'string') : [];
      return Object.freeze({
        email: payload.sub ?? '', roles, jti: payload.jti ?? '',
        issuedAt: payload.iat ?? 0, expiresAt: payload.exp ?? 0, keyVersion,
      });
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw expired();
      throw invalid();
    }
  }

  private parseSvc(token: string): SvcParts | null {
    const m = SVC_PATTERN.exec(token);
    if (!m) return null;
    return { keyVersion: Number(m[1]), jti: m[2] ?? '', expiresAt: Number(m[3]), mac: Buffer.from(m[4] ?? '', 'base64url') };
  }

  private macMatches(parts: SvcParts, account: AccountConfig): boolean {
    if (!this.keyring.hasVersion(parts.keyVersion)) return false;
    const expected = this.svcMac(parts.keyVersion, parts.jti, account.email, parts.expiresAt, account);
    return expected.length === parts.mac.length && timingSafeEqual(expected, parts.mac);
  }

  /** Whether `svcToken` is the companion of the verified jwt_token `claims` for `account`. */
  svcMatchesJwt(svcToken: string, claims: SessionClaims, account: AccountConfig): boolean {
    const parts = this.parseSvc(svcToken);
    if (!parts) return false;
    if (parts.jti !== claims.jti || parts.expiresAt !== claims.expiresAt || parts.keyVersion !== claims.keyVersion) return false;
    return this.macMatches(parts, account);
  }

  /** Whether a secret is shaped like an svc_token (the proxy accepts tokens and passwords). */
  looksLikeSvcToken(secret: string): boolean {
    return SVC_PATTERN.test(secret);
  }

  /** Standalone check of an svc_token for `account` (the proxy's path): MAC and expiry. */
  verifySvc(svcToken: string, account: AccountConfig): 'valid' | 'expired' | 'invalid' {
    const parts = this.parseSvc(svcToken);
    if (!parts || !this.macMatches(parts, account)) return 'invalid';
    return parts.expiresAt > this.nowSeconds() ? 'valid' : 'expired';
  }
}
