/** The proxy's TCP listener: accepts clients, admits up to maxClientConnections, and shuts down cleanly. */
import net from 'node:net';
import { backendMessageLimits, frontendMessageLimits } from './protocol/messageLimits.js';
import {
  DEFAULT_HANDSHAKE_TIMEOUT_SECONDS, DEFAULT_LOGIN_TIMEOUT_SECONDS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_PENDING_LOGINS, type ProxyOptions,
} from './proxyOptions.js';
import { CancelRegistry } from './session/cancelRegistry.js';
import { CancelRouter } from './session/cancelRouter.js';
import { ClientSession, type SessionServices } from './session/clientSession.js';
import { WarningThrottle } from './session/warningThrottle.js';
import { createClientTlsContext } from './tls/clientTlsContext.js';
import { readWithReusedBuffer } from './reusedReadBuffer.js';
import { UpstreamConnector } from './upstream/upstreamConnector.js';

export interface RunningProxy {
  /** The port actually listened on (useful with port 0). */
  port: number;
  /** Runs the cancel of a session of this proxy when the key matches (a cancel relayed from another worker). */
  cancelHere(processId: number, secretKey: Buffer): boolean;
  /** Stops accepting, ends every session with a FATAL, and resolves when all are closed. */
  close(): Promise<void>;
}

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const logger = options.logger;
  const handshakeTimeoutMs = (options.handshakeTimeoutSeconds ?? DEFAULT_HANDSHAKE_TIMEOUT_SECONDS) * 1000;
  const sessions = new Set<ClientSession>();
  /** Waiting for the last session to be gone (close()). */
  const allGone: (() => void)[] = [];
  const admitted = new Set<ClientSession>();
  const loggingIn = new Set<ClientSession>();
  const maxPendingLogins = options.maxPendingLogins ?? DEFAULT_MAX_PENDING_LOGINS;
  const routing = options.cancelRouting ?? { peerId: 0, workerSlot: 0, peers: [] };
  const cancelRegistry = new CancelRegistry({ peerId: routing.peerId, workerSlot: routing.workerSlot });
  const services: SessionServices = {
    options,
    logger,
    tlsContext: createClientTlsContext(options.tls, logger),
    connector: new UpstreamConnector(options.upstream, handshakeTimeoutMs),
    cancelRegistry,
    cancelRouter: new CancelRouter(cancelRegistry, routing, logger),
    frontendLimits: frontendMessageLimits(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES),
    backendLimits: backendMessageLimits(),
    handshakeTimeoutMs,
    loginTimeoutMs: (options.loginTimeoutSeconds ?? DEFAULT_LOGIN_TIMEOUT_SECONDS) * 1000,
    warnings: new WarningThrottle(logger),
    beginLogin: (session) => {
      if (loggingIn.size >= maxPendingLogins) return false;
      loggingIn.add(session);
      return true;
    },
    endLogin: (session) => {
      loggingIn.delete(session);
    },
    admit: (session) => {
      if (admitted.size >= options.maxClientConnections) return false;
      admitted.add(session);
      return true;
    },
    release: (session) => {
      admitted.delete(session);
    },
  };

  // Paused on connect: the accepted socket's handle is moved, unread, to one that reads into a reused buffer.
  const server = net.createServer({ noDelay: true, pauseOnConnect: true }, (accepted) => {
    let socket: net.Socket;
    try {
      socket = readWithReusedBuffer(accepted).socket;
    } catch (error) {
      logger.error({ err: error }, 'proxy: could not take over an accepted connection; closed it');
      return;
    }
    // Counted until its connection closes, on Node's socket or, once handed over, the native addon's.
    const session: ClientSession = new ClientSession(socket, services, () => {
      sessions.delete(session);
      if (sessions.size === 0) for (const resolve of allGone.splice(0)) resolve();
    });
    sessions.add(session);
    void session.run();
  });
  // Sessions are admitted once authenticated, and logins are counted apart (refused with 53300 past
  // maxPendingLogins); this hard cap on sockets, past which the kernel's connection is closed bare,
  // leaves room for the refusals to be answered. (A session handed to the native socket addon is
  // no longer one of the server's sockets: maxClientConnections, counted by `admit`, bounds those.)
  server.maxConnections = options.maxClientConnections + maxPendingLogins * 2 + 16;
  server.on('error', (error) => logger.error({ err: error }, 'proxy: listener error'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  logger.info({ host: options.host, port, tls: options.tls.mode }, 'proxy: listening');

  // A session's roles are fixed at its login: when a reload changes its account, it ends.
  const stopWatchingAccounts = options.authenticator.onAccountsChanged(() => {
    let ended = 0;
    for (const session of sessions) if (session.recheckAccount()) ended++;
    if (ended > 0) logger.info({ sessions: ended }, 'proxy: sessions ended: their accounts changed');
  });

  let closing: Promise<void> | null = null;
  return {
    port,
    cancelHere: (processId, secretKey) => {
      const cancelled = cancelRegistry.cancel(processId, secretKey);
      logger.debug(cancelled ? 'proxy: relayed cancel delivered to its session' : 'proxy: relayed cancel dropped');
      return cancelled;
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        stopWatchingAccounts();
        logger.info({ sessions: sessions.size }, 'proxy: stopping; ending every session');
        const serverClosed = new Promise<void>((closed) => server.close(() => closed()));
        const sessionsGone = sessions.size === 0 ? Promise.resolve() : new Promise<void>((gone) => allGone.push(gone));
        for (const session of sessions) session.shutdown();
        void Promise.all([serverClosed, sessionsGone]).then(() => {
          logger.info('proxy: stopped');
          resolve();
        });
      });
      return closing;
    },
  };
}
