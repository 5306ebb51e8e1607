/**
 * Logs the proxy into PostgreSQL with its own credentials (SCRAM-SHA-256, md5, password or trust)
 * and collects what the client must see of the startup: ParameterStatus, notices, the backend key
 * and the first ReadyForQuery, all as the raw bytes PostgreSQL sent.
 */
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { parseErrorFields } from '../protocol/errorFields.js';
import { passwordMessage, saslInitialResponse, saslResponse, startupMessage, typedMessage } from '../protocol/messages.js';
import { HandshakeReader } from '../protocol/handshakeReader.js';
import type { UpstreamLogin, UpstreamOptions } from '../proxyOptions.js';
import { ScramSha256Client, type SaltedPasswordCache } from './scramClient.js';
import { UpstreamUnavailable, openUpstreamTransport } from './upstreamTransport.js';

export { UpstreamUnavailable };

/** PostgreSQL refused the login or the startup: its ErrorResponse, raw and decoded. */
export class UpstreamRejected extends Error {
  override readonly name = 'UpstreamRejected';
  constructor(
    readonly errorMessage: Buffer,
    readonly fields: Map<string, string>,
  ) {
    super(`upstream refused the connection: ${fields.get('C') ?? '?'} ${fields.get('M') ?? ''}`);
  }
}

/** The upstream asked for something the proxy cannot do (an auth method, a protocol step). */
export class UpstreamProtocolError extends Error {
  override readonly name = 'UpstreamProtocolError';
}

export interface UpstreamBackendKey {
  processId: number;
  secretKey: Buffer;
}

export interface UpstreamSession {
  socket: Duplex;
  /** ParameterStatus and NoticeResponse messages of the startup, in order, as received. */
  startupMessages: Buffer[];
  backendKey: UpstreamBackendKey;
  /** The ReadyForQuery that ended the startup, as received. */
  readyForQuery: Buffer;
  /** Bytes PostgreSQL sent after that ReadyForQuery (normally none). */
  leftover: Buffer;
}

const AUTH_OK = 0;
const AUTH_CLEARTEXT = 3;
const AUTH_MD5 = 5;
const AUTH_SASL = 10;
const AUTH_SASL_CONTINUE = 11;
const AUTH_SASL_FINAL = 12;

function passwordOf(login: UpstreamLogin): string {
  if (login.password === undefined) throw new UpstreamProtocolError(`the server asks for a password for ${login.user} and none is configured`);
  return login.password;
}

function md5Hex(data: Buffer | string): string {
  return createHash('md5').update(data).digest('hex');
}

export class UpstreamConnector {
  /** Per login user: SCRAM's salted passwords, so a pool of sessions pays PBKDF2 once. */
  private readonly saltedPasswords = new Map<string, SaltedPasswordCache>();

  constructor(
    private readonly upstream: UpstreamOptions,
    private readonly timeoutMs: number,
  ) {}

  /**
   * `parameters` are the client's startup parameters to pass on (user and database are the
   * proxy's); `login` defaults to the proxy's own upstream user.
   */
  async connect(database: string, parameters: ReadonlyMap<string, string>, login: UpstreamLogin = this.defaultLogin()): Promise<UpstreamSession> {
    const socket = await openUpstreamTransport(this.upstream, this.timeoutMs);
    const reader = new HandshakeReader(socket, 1 << 20);
    const timer = setTimeout(() => socket.destroy(new UpstreamUnavailable(`startup timeout after ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      const startup = new Map<string, string>([['user', login.user], ['database', database]]);
      for (const [name, value] of parameters) if (!startup.has(name)) startup.set(name, value);
      socket.write(startupMessage(startup));
      await this.authenticate(socket, reader, login);
      const session = await this.collectStartup(socket, reader);
      return session;
    } catch (error) {
      reader.detach();
      socket.destroy();
      if (error instanceof UpstreamRejected || error instanceof UpstreamProtocolError || error instanceof UpstreamUnavailable) throw error;
      throw new UpstreamUnavailable((error as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  private defaultLogin(): UpstreamLogin {
    const { user, password } = this.upstream;
    return password === undefined ? { user } : { user, password };
  }

  private async authenticate(socket: Duplex, reader: HandshakeReader, login: UpstreamLogin): Promise<void> {
    let scram: ScramSha256Client | null = null;
    for (;;) {
      const message = await reader.readMessage();
      if (message.type === 'E') throw new UpstreamRejected(typedMessage('E', message.body), parseErrorFields(message.body));
      if (message.type === 'v' || message.type === 'N') continue;
      if (message.type !== 'R') throw new UpstreamProtocolError(`unexpected message '${message.type}' during authentication`);
      const code = message.body.readInt32BE(0);
      switch (code) {
        case AUTH_OK:
          return;
        case AUTH_CLEARTEXT:
          socket.write(passwordMessage(passwordOf(login)));
          break;
        case AUTH_MD5: {
          const salt = message.body.subarray(4, 8);
          const inner = md5Hex(passwordOf(login) + login.user);
          socket.write(passwordMessage(`md5${md5Hex(Buffer.concat([Buffer.from(inner), salt]))}`));
          break;
        }
        case AUTH_SASL: {
          const mechanisms = message.body.toString('utf8', 4).split('\0');
          if (!mechanisms.includes('SCRAM-SHA-256')) {
            throw new UpstreamProtocolError(`no supported SASL mechanism among ${mechanisms.filter(Boolean).join(', ')}`);
          }
          let cache = this.saltedPasswords.get(login.user);
          if (cache === undefined) this.saltedPasswords.set(login.user, cache = new Map());
          scram = new ScramSha256Client(passwordOf(login), cache);
          socket.write(saslInitialResponse('SCRAM-SHA-256', scram.clientFirstMessage()));
          break;
        }
        case AUTH_SASL_CONTINUE:
          if (!scram) throw new UpstreamProtocolError('SASL continue without SASL start');
          socket.write(saslResponse(await scram.clientFinalMessage(message.body.subarray(4))));
          break;
        case AUTH_SASL_FINAL:
          if (!scram) throw new UpstreamProtocolError('SASL final without SASL start');
          scram.verifyServerFinal(message.body.subarray(4));
          break;
        default:
          throw new UpstreamProtocolError(`unsupported authentication method ${code}`);
      }
    }
  }

  private async collectStartup(socket: Duplex, reader: HandshakeReader): Promise<UpstreamSession> {
    const startupMessages: Buffer[] = [];
    let backendKey: UpstreamBackendKey | null = null;
    for (;;) {
      const message = await reader.readMessage();
      switch (message.type) {
        case 'S':
        case 'N':
          startupMessages.push(typedMessage(message.type, message.body));
          break;
        case 'K':
          backendKey = { processId: message.body.readInt32BE(0), secretKey: Buffer.from(message.body.subarray(4)) };
          break;
        case 'E':
          throw new UpstreamRejected(typedMessage('E', message.body), parseErrorFields(message.body));
        case 'Z':
          if (!backendKey) throw new UpstreamProtocolError('no BackendKeyData before ReadyForQuery');
          return { socket, startupMessages, backendKey, readyForQuery: typedMessage('Z', message.body), leftover: reader.detach() };
        default:
          throw new UpstreamProtocolError(`unexpected message '${message.type}' during startup`);
      }
    }
  }

}
