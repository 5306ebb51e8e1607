/**
 * Client authentication, terminated at the proxy: the user is an account's email and the password
 * either a svc_token or the account's own password, both checked by the shared AccountAuthenticator.
 * The password travels in cleartext, so it is asked for only over TLS (or from loopback when allowed).
 */
import type { Duplex } from 'node:stream';
import { auditedAccountName, NO_AUDIT, type AuditLog } from '../../audit/index.js';
import { AuthError, type AccountAuthenticator, type AuthenticatedAccount } from '../../auth/index.js';
import { authenticationCleartextPassword } from '../protocol/messages.js';
import { ConnectionClosed, type HandshakeReader } from '../protocol/handshakeReader.js';
import { ProtocolViolation } from '../protocol/startupPacket.js';
import { SessionFatal } from './sessionFatal.js';

export async function authenticateClient(
  socket: Duplex,
  reader: HandshakeReader,
  user: string,
  authenticator: AccountAuthenticator,
  /** The peer address, for the authenticator's per-client rate limit. */
  clientAddress: string | undefined,
  audit: AuditLog = NO_AUDIT,
): Promise<AuthenticatedAccount> {
  socket.write(authenticationCleartextPassword());
  const message = await reader.readMessage();
  // A client that leaves instead of answering (Terminate) is not an error to report.
  if (message.type === 'X') throw new ConnectionClosed('the client left during authentication');
  if (message.type !== 'p') {
    throw new ProtocolViolation(`expected password response, got message type ${message.type.charCodeAt(0)}`);
  }
  const end = message.body.indexOf(0);
  const secret = message.body.toString('utf8', 0, end < 0 ? message.body.length : end);
  const failed = new SessionFatal('28P01', `password authentication failed for user "${user}"`);
  let account: AuthenticatedAccount | null;
  try {
    account = secret.length === 0 ? null : await authenticator.authenticateDbUser(user, secret, clientAddress);
  } catch (error) {
    if (!(error instanceof AuthError) || error.failure !== 'rate_limited') throw error;
    audit.record({ event: 'login', door: 'proxy', account: auditedAccountName(user), client: clientAddress, outcome: 'rate_limited' });
    throw new SessionFatal('28000', `too many failed logins for "${user}" from this address; retry in ${error.retryAfterSeconds ?? 1} s`, {
      hint: 'The limits are api.loginRateLimit in the configuration; the right password from another address still works.',
    });
  }
  if (!account) {
    audit.record({ event: 'login', door: 'proxy', account: auditedAccountName(user), client: clientAddress, outcome: 'failed' });
    throw failed;
  }
  audit.record({ event: 'login', door: 'proxy', account: account.email, client: clientAddress, outcome: 'ok' });
  return account;
}
