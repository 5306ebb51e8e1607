/**
 * One client connection from accept to close: startup and TLS, admission, authentication against
 * the accounts, the upstream login, then the relay. Failures end in a FATAL ErrorResponse worded
 * as PostgreSQL words them where PostgreSQL has a case for it.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import type { Logger } from 'pino';
import type { AuthenticatedAccount } from '../../auth/index.js';
import {
  authenticationOk, backendKeyData, errorResponse, negotiateProtocolVersion, type ErrorFields,
} from '../protocol/messages.js';
import { ConnectionClosed } from '../protocol/handshakeReader.js';
import { ProtocolViolation } from '../protocol/startupPacket.js';
import { mapDatabase, type ProxyOptions } from '../proxyOptions.js';
import {
  UpstreamProtocolError, UpstreamRejected, UpstreamUnavailable, type UpstreamConnector, type UpstreamSession,
} from '../upstream/upstreamConnector.js';
import { cancelUpstreamQuery } from '../upstream/upstreamCancel.js';
import type { WarningThrottle } from './warningThrottle.js';
import { AmbiguousUpstreamLogin, upstreamLoginFor } from '../upstream/upstreamLogins.js';
import type { UpstreamLogin } from '../proxyOptions.js';
import type { CancelRegistry, IssuedBackendKey } from './cancelRegistry.js';
import type { CancelRouter } from './cancelRouter.js';
import { authenticateClient } from './clientAuthentication.js';
import { negotiateClientStartup } from './clientStartup.js';
import { handOverSocket } from '../nativeSockets/socketHandOver.js';
import type { RelaySocket } from './relaySocket.js';
import { SessionFatal } from './sessionFatal.js';
import { SessionRelay } from './sessionRelay.js';

export interface SessionServices {
  options: ProxyOptions;
  logger: Logger;
  tlsContext: tls.SecureContext | null;
  connector: UpstreamConnector;
  cancelRegistry: CancelRegistry;
  cancelRouter: CancelRouter;
  frontendLimits: Uint32Array;
  backendLimits: Uint32Array;
  handshakeTimeoutMs: number;
  /** From accept to authenticated. */
  loginTimeoutMs: number;
  /** Concise, rate-limited warnings about what clients send. */
  warnings: WarningThrottle;
  /** False when too many connections are still logging in (this one is then refused with 53300). */
  beginLogin(session: ClientSession): boolean;
  endLogin(session: ClientSession): void;
  /** Counts the session against maxClientConnections; false when the proxy is full. */
  admit(session: ClientSession): boolean;
  release(session: ClientSession): void;
}

const NOT_REPLICATION = new Set(['false', 'off', 'no', '0']);
const SHUTDOWN: ErrorFields = { severity: 'FATAL', code: '57P01', message: 'terminating connection due to administrator command' };

/** A reload took away what the login was granted: what the session sees was decided under it. */
function accountChanged(email: string): ErrorFields {
  return {
    severity: 'FATAL', code: '57P01',
    message: `terminating connection because the account "${email}" was disabled, removed, or given other roles or another password in pgveil's configuration`,
    hint: 'Log in again: a session keeps the roles it logged in with, so it ends when they change.',
  };
}

/** name → value of the ParameterStatus ('S') messages among the upstream's startup messages. */
function parameterStatuses(messages: readonly Buffer[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const message of messages) {
    if (message[0] !== 0x53) continue;
    const nameEnd = message.indexOf(0, 5);
    const valueEnd = nameEnd < 0 ? -1 : message.indexOf(0, nameEnd + 1);
    if (valueEnd > nameEnd) values.set(message.toString('utf8', 5, nameEnd), message.toString('utf8', nameEnd + 1, valueEnd));
  }
  return values;
}

/** The socket to relay on (the native addon's when `native` and it can take it) and the bytes already read from it. */
function relayedSocket(socket: Duplex, readSoFar: Buffer, native: boolean): { socket: RelaySocket; bytes: Buffer; native: boolean } {
  const handed = native ? handOverSocket(socket) : null;
  if (handed === null) return { socket, bytes: readSoFar, native: false };
  return { socket: handed.socket, bytes: handed.held.length === 0 ? readSoFar : Buffer.concat([readSoFar, ...handed.held]), native: true };
}

function isLoopback(address: string | undefined): boolean {
  return address !== undefined && (address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.'));
}

export class ClientSession {
  private current: RelaySocket;
  private relay: SessionRelay | null = null;
  /** The client once its startup packet is read: from then on it understands an ErrorResponse. */
  private started: RelaySocket | null = null;
  /** The client's connection was handed to the native addon: Node's socket closing is not the session's end. */
  private handedOver = false;
  private gone = false;
  private stopping = false;
  /** Set once authenticated: checked again whenever the accounts change. */
  private account: AuthenticatedAccount | null = null;
  private readonly logger: Logger;

  /** `onGone`: the client's connection has closed (whichever socket carried it by then). */
  constructor(
    private readonly socket: Socket,
    private readonly services: SessionServices,
    private readonly onGone: () => void = () => undefined,
  ) {
    this.current = socket;
    this.logger = services.logger;
    socket.setNoDelay(true);
    socket.on('error', this.onSocketError);
    socket.once('close', () => {
      if (!this.handedOver) this.connectionGone();
    });
  }

  private readonly onSocketError = (error: Error): void => {
    this.logger.debug({ err: { message: error.message } }, 'proxy: client socket error');
  };

  private connectionGone(): void {
    if (this.gone) return;
    this.gone = true;
    this.end();
    this.onGone();
  }

  async run(): Promise<void> {
    // Logging in is bounded in time and in number, apart from the sessions it may become: idle
    // sockets that never authenticate cannot hold the slots of real clients.
    const loggingIn = this.services.beginLogin(this);
    let timer = setTimeout(() => this.current.destroy(), this.services.loginTimeoutMs);
    let upstream: UpstreamSession | null = null;
    let relayedUpstreamSocket: RelaySocket | null = null;
    let key: IssuedBackendKey | null = null;
    let admitted = false;
    try {
      const { tlsContext, options } = this.services;
      const negotiated = await negotiateClientStartup(this.socket, tlsContext, (secure) => {
        this.current = secure;
        secure.on('error', (error) => this.logger.debug({ err: { message: error.message } }, 'proxy: client TLS error'));
      });
      if (negotiated.kind === 'cancel') {
        this.services.cancelRouter.route(negotiated.processId, negotiated.secretKey);
        this.services.endLogin(this);
        clearTimeout(timer);
        this.socket.end();
        return;
      }
      const { socket: client, reader, startup, encrypted } = negotiated;
      this.started = client;
      if (startup.minorVersion > 0 || startup.protocolOptions.length > 0) {
        client.write(negotiateProtocolVersion(0, startup.protocolOptions));
      }
      if (!loggingIn) {
        throw new SessionFatal('53300', 'sorry, too many connections are logging in already', { hint: 'The limit is proxy.maxPendingLogins.' });
      }
      const parameters = startup.parameters;
      const replication = parameters.get('replication');
      if (replication !== undefined && !NOT_REPLICATION.has(replication.toLowerCase())) {
        throw new SessionFatal('0A000', 'pgveil does not relay replication connections', { hint: 'Connect to the database server directly for replication.' });
      }
      const user = parameters.get('user');
      if (!user) throw new SessionFatal('28000', 'no PostgreSQL user name specified in startup packet');
      if (options.tls.mode === 'require' && !encrypted) {
        throw new SessionFatal('28000', 'pgveil accepts only TLS connections', { hint: 'Connect with sslmode=require.' });
      }
      if (!encrypted && !(options.allowCleartextFromLoopback && isLoopback(this.socket.remoteAddress))) {
        throw new SessionFatal('28000', 'pgveil asks for the password only over TLS', { hint: 'Connect with sslmode=require.' });
      }
      const account = await authenticateClient(client, reader, user, options.authenticator, this.socket.remoteAddress, options.audit);
      this.account = account;
      this.services.endLogin(this);
      clearTimeout(timer);
      timer = setTimeout(() => this.current.destroy(), this.services.handshakeTimeoutMs);
      admitted = this.services.admit(this);
      if (!admitted) throw new SessionFatal('53300', 'sorry, too many clients already', { hint: 'The limit is proxy.maxClientConnections.' });
      if (this.gone) throw new ConnectionClosed('client left while its password was checked');
      const clientDatabase = parameters.get('database') || user;
      const upstreamDatabase = mapDatabase(options, clientDatabase);
      if (upstreamDatabase === null) throw new SessionFatal('3D000', `database "${clientDatabase}" does not exist`);
      const passOn = new Map([...parameters].filter(([name]) => name !== 'user' && name !== 'database' && name !== 'replication'));
      let login: UpstreamLogin;
      try {
        login = upstreamLoginFor(account.roles, options);
      } catch (error) {
        if (!(error instanceof AmbiguousUpstreamLogin)) throw error;
        throw new SessionFatal('28000', `pgveil cannot choose the upstream login of ${account.email}: ${error.message}`, { hint: 'Map the account\'s roles to one upstream login in proxy.upstreamRoles.' });
      }
      upstream = await this.services.connector.connect(upstreamDatabase, passOn, login);
      if (this.current.destroyed || this.stopping) throw new ConnectionClosed('client left during the upstream login');
      // The accounts may have been reloaded during the upstream login (recheckAccount saw no relay).
      if (!options.authenticator.stillAuthorises(account)) throw new SessionFatal('28000', `the account "${account.email}" changed while logging in`, { hint: 'Log in again.' });
      const connected = upstream;
      const timeoutMs = this.services.handshakeTimeoutMs;
      const cancelUpstream = (): void => {
        cancelUpstreamQuery(options.upstream, connected.backendKey, timeoutMs).catch((error: unknown) =>
          this.logger.warn({ err: { message: (error as Error).message } }, 'proxy: cancel could not reach the database server'));
      };
      const issued = this.services.cancelRegistry.issue(cancelUpstream);
      key = issued;
      // Logged in: plaintext sockets are relayed by the native addon from here on, when it is there.
      const native = options.nativeSocketIo !== false;
      const relayedClient = relayedSocket(client, reader.detach(), native);
      const relayedUpstream = relayedSocket(connected.socket, connected.leftover, native);
      const relayClient = relayedClient.socket;
      relayedUpstreamSocket = relayedUpstream.socket;
      if (relayedClient.native) {
        this.handedOver = true;
        this.current = relayClient;
        this.started = relayClient;
        relayClient.on('error', this.onSocketError);
        relayClient.once('close', () => this.connectionGone());
      }
      // The relay (and the hooks of the session) exist before the client hears it is logged in.
      this.relay = new SessionRelay({
        client: relayClient,
        upstream: relayedUpstream.socket,
        hooksFactory: options.hooks,
        frontendLimits: this.services.frontendLimits,
        backendLimits: this.services.backendLimits,
        idleTimeoutMs: options.idleTimeoutSeconds * 1000,
        logger: this.logger,
        warnings: this.services.warnings,
        cancelUpstream,
        // The admission slot is given back when the client's connection is gone (connectionGone), not
        // when the relay stops: a client that ignores the proxy's FIN still holds a socket till then.
        onClosed: () => issued.release(),
      }, { account, clientDatabase, upstreamDatabase, upstreamUser: login.user, serverParameters: parameterStatuses(connected.startupMessages), startupParameters: passOn });
      relayClient.cork();
      relayClient.write(authenticationOk());
      for (const message of connected.startupMessages) relayClient.write(message);
      relayClient.write(backendKeyData(issued.processId, issued.secretKey));
      relayClient.write(connected.readyForQuery);
      relayClient.uncork();
      clearTimeout(timer);
      this.relay.start(relayedClient.bytes, relayedUpstream.bytes);
      connected.socket.on('error', () => undefined);
      this.logger.debug({ database: clientDatabase }, 'proxy: session started');
    } catch (error) {
      clearTimeout(timer);
      this.services.endLogin(this);
      (relayedUpstreamSocket ?? upstream?.socket)?.destroy();
      key?.release();
      this.failHandshake(error);
      this.end(admitted);
    }
  }

  /**
   * After the accounts changed: ends the session (FATAL 57P01, before anything more leaves) when
   * its account no longer has what it logged in with. True when it ended it.
   */
  recheckAccount(): boolean {
    const account = this.account;
    if (account === null || this.stopping || this.relay === null || this.services.options.authenticator.stillAuthorises(account)) return false;
    this.stopping = true;
    this.relay.terminate(accountChanged(account.email));
    return true;
  }

  /** Ends the session at proxy shutdown. */
  shutdown(): void {
    if (this.stopping) return;
    this.stopping = true;
    if (this.relay) {
      this.relay.terminate(SHUTDOWN);
    } else if (this.started && this.started.writable && !this.started.destroyed) {
      // Still logging in: told as PostgreSQL tells it, while the login steps unwind on their own.
      const client = this.started;
      client.end(errorResponse(SHUTDOWN));
      setTimeout(() => client.destroy(), 1_000).unref();
    } else {
      this.current.destroy();
    }
  }

  private failHandshake(error: unknown): void {
    const client = this.current;
    let fields: ErrorFields | null = null;
    let raw: Buffer | null = null;
    // At shutdown the client has had its FATAL already (or was closed before it could read one).
    if (this.stopping) return;
    if (error instanceof ProtocolViolation && error.silent) {
      client.destroy();
      return;
    }
    if (error instanceof SessionFatal) {
      fields = error.fields;
    } else if (error instanceof ProtocolViolation) {
      this.services.warnings.warn({ client: this.socket.remoteAddress, reason: error.message }, 'proxy: protocol violation during login');
      fields = { severity: 'FATAL', code: '08P01', message: error.message };
    } else if (error instanceof UpstreamUnavailable) {
      this.logger.warn({ reason: error.message }, 'proxy: database server unreachable');
      fields = { severity: 'FATAL', code: '08001', message: 'pgveil cannot connect to the database server', detail: error.message };
    } else if (error instanceof UpstreamRejected) {
      const code = error.fields.get('C') ?? '';
      if (code.startsWith('28')) {
        this.logger.error({ code }, 'proxy: the database server refused the proxy login');
        fields = { severity: 'FATAL', code: '08001', message: 'the database server refused pgveil\'s login', hint: 'Check the proxy\'s upstream user and password.' };
      } else {
        raw = error.errorMessage;
      }
    } else if (error instanceof UpstreamProtocolError) {
      this.logger.error({ reason: error.message }, 'proxy: cannot log in to the database server');
      fields = { severity: 'FATAL', code: '08001', message: 'pgveil cannot log in to the database server', detail: error.message };
    } else if (!(error instanceof ConnectionClosed)) {
      // One line; the stack only at debug level.
      this.logger.error({ errorName: (error as Error).name, reason: (error as Error).message }, 'proxy: session setup failed');
      this.logger.debug({ err: error }, 'proxy: session setup failed (stack)');
      fields = { severity: 'FATAL', code: 'XX000', message: 'pgveil could not set up the session' };
    }
    const bytes = raw ?? (fields ? errorResponse(fields) : null);
    if (bytes && !client.destroyed && client.writable) {
      client.end(bytes);
      setTimeout(() => client.destroy(), 1_000).unref();
    } else {
      client.destroy();
    }
  }

  /** Gives the admission slot back (again is harmless: the connection may go before the login's own unwinding). */
  private end(admitted = true): void {
    if (admitted) this.services.release(this);
  }
}
