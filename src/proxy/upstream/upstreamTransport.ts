/**
 * Opens the TCP (and optionally TLS) connection to PostgreSQL, following libpq's sslmode:
 * disable, prefer (TLS if offered), require (TLS, unverified), verify-full (TLS, CA and host name
 * checked); or a Unix-domain socket when the host is a directory.
 */
import { isIP } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { sslRequest } from '../protocol/messages.js';
import type { UpstreamOptions } from '../proxyOptions.js';

export class UpstreamUnavailable extends Error {
  override readonly name = 'UpstreamUnavailable';
}

/**
 * With `reuseReadBuffer` (plaintext only), the socket reads into one reused buffer (`onread`) and
 * emits a pooled copy of each read as 'data': cheaper than the stream path's fresh 64 KiB
 * allocation per read, while everything downstream still sees ordinary 'data' events and
 * pause/resume still stop and restart reading. TLS needs the stream path (it reads the socket itself).
 */
function connectTcp(host: string, port: number, timeoutMs: number, reuseReadBuffer: boolean): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    // As in libpq, a host that is a directory names a Unix-domain socket (no TLS there).
    const options: net.NetConnectOpts = isSocketDirectory(host)
      ? { path: `${host}/.s.PGSQL.${port}` }
      : { host, port, noDelay: true };
    if (reuseReadBuffer) {
      const readBuffer = Buffer.allocUnsafe(64 * 1024);
      options.onread = {
        buffer: readBuffer,
        callback: (bytes: number) => {
          socket.emit('data', Buffer.from(readBuffer.subarray(0, bytes)));
          return true;
        },
      };
    }
    const socket = net.connect(options);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new UpstreamUnavailable(`timeout after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
    const onError = (error: NodeJS.ErrnoException): void => {
      clearTimeout(timer);
      reject(new UpstreamUnavailable(error.code ?? error.message));
    };
    socket.once('error', onError);
  });
}

/** Sends SSLRequest and reads the one-byte answer. */
function askForTls(socket: net.Socket): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const cleanup = (): void => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      cleanup();
      socket.pause();
      if (chunk.length !== 1) reject(new UpstreamUnavailable('unexpected answer to SSLRequest'));
      else if (chunk[0] === 0x53) resolve(true);
      else if (chunk[0] === 0x4e) resolve(false);
      else reject(new UpstreamUnavailable('unexpected answer to SSLRequest'));
    };
    const onError = (error: NodeJS.ErrnoException): void => {
      cleanup();
      reject(new UpstreamUnavailable(error.code ?? error.message));
    };
    const onClose = (): void => {
      cleanup();
      reject(new UpstreamUnavailable('server closed the connection during SSL negotiation'));
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    socket.write(sslRequest());
  });
}

function upgradeToTls(socket: net.Socket, upstream: UpstreamOptions, timeoutMs: number): Promise<tls.TLSSocket> {
  const verify = upstream.sslmode === 'verify-full';
  return new Promise((resolve, reject) => {
    const secure = tls.connect({
      socket,
      servername: isIP(upstream.host) === 0 ? upstream.host : undefined,
      ca: upstream.ca,
      rejectUnauthorized: verify,
      // Without verification, any certificate is accepted (sslmode=require).
      checkServerIdentity: verify ? tls.checkServerIdentity : () => undefined,
    });
    const timer = setTimeout(() => {
      secure.destroy();
      reject(new UpstreamUnavailable(`TLS handshake timeout after ${timeoutMs} ms`));
    }, timeoutMs);
    secure.once('secureConnect', () => {
      clearTimeout(timer);
      secure.off('error', onError);
      resolve(secure);
    });
    const onError = (error: Error): void => {
      clearTimeout(timer);
      secure.destroy();
      reject(new UpstreamUnavailable(`TLS: ${error.message}`));
    };
    secure.once('error', onError);
  });
}

export function isSocketDirectory(host: string): boolean {
  return host.startsWith('/');
}

/**
 * A connected socket, encrypted as the sslmode asks (libpq ignores sslmode on Unix-domain
 * sockets, and so does this); rejects with UpstreamUnavailable.
 */
export async function openUpstreamTransport(upstream: UpstreamOptions, timeoutMs: number): Promise<Duplex> {
  const plaintext = upstream.sslmode === 'disable' || isSocketDirectory(upstream.host);
  const socket = await connectTcp(upstream.host, upstream.port, timeoutMs, plaintext);
  if (plaintext) return socket;
  try {
    const accepted = await askForTls(socket);
    if (!accepted) {
      if (upstream.sslmode === 'prefer') {
        socket.resume();
        return socket;
      }
      throw new UpstreamUnavailable('the server does not support SSL, but the proxy requires it (sslmode)');
    }
    return await upgradeToTls(socket, upstream, timeoutMs);
  } catch (error) {
    socket.destroy();
    throw error;
  }
}
