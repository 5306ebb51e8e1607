/**
 * Which upstream PostgreSQL login a session uses: the one its account's roles map to
 * (`proxy.upstreamRoles`), else the proxy's default `upstream.user`. Each mapping is a login of its
 * own, not a shared login plus SET ROLE: a client can undo SET ROLE (RESET ROLE, RESET ALL, DISCARD
 * ALL, set_config('role', …) inside any function), while a login role cannot be left, so
 * PostgreSQL's own privileges hold whatever SQL the session sends.
 */
import type { ProxyOptions, UpstreamLogin } from '../proxyOptions.js';

export class AmbiguousUpstreamLogin extends Error {}

export function upstreamLoginFor(roles: readonly string[], options: Pick<ProxyOptions, 'upstream' | 'upstreamLogins'>): UpstreamLogin {
  const mapped = new Map<string, UpstreamLogin>();
  for (const role of roles) {
    const login = options.upstreamLogins?.get(role);
    if (login !== undefined) mapped.set(login.user, login);
  }
  if (mapped.size > 1) {
    throw new AmbiguousUpstreamLogin(`the account's roles map to different upstream logins (${[...mapped.keys()].join(', ')}) in proxy.upstreamRoles`);
  }
  const [login] = mapped.values();
  if (login !== undefined) return login;
  const { user, password } = options.upstream;
  return password === undefined ? { user } : { user, password };
}
