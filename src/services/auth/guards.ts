// Authentication (cookie or bearer, CSRF for cookie mutations, the must-change-password gate) and role checks.
import { ApiError } from '../../errors.ts';
import { csrfTokenValid } from './csrf.ts';
import type { Role } from '../../contracts/roles.ts';
import type { ResolvedSession } from './sessions.ts';
import type { Actor, Credentials } from '../../contracts/actor.ts';

export { ROLES, type Role } from '../../contracts/roles.ts';

/**
 * Finds who the credentials belong to, trying the cookie, then the bearer token, each through `resolve`
 * (which reaches the database only when called), and checks CSRF for cookie-authenticated mutations: the
 * token must be the one issued, under `secret`, for the session and access token of the cookie.
 */
export async function authenticate(
  credentials: Credentials,
  resolve: (accessToken: string) => Promise<ResolvedSession>,
  opts: { mutation: boolean; secret: Buffer },
): Promise<Actor> {
  const { cookieToken, bearerToken } = credentials;
  // No credential at all: answer without touching the database.
  if (!cookieToken && !bearerToken) throw ApiError.unauthorized();

  let resolved: ResolvedSession | undefined;
  let via: Actor['via'] = 'cookie';
  if (cookieToken) {
    try {
      resolved = await resolve(cookieToken);
    } catch (error) {
      // A stale cookie must not shadow a valid bearer token (CONTRACT §3.2).
      if (!bearerToken) throw error;
    }
  }
  if (!resolved && bearerToken) {
    resolved = await resolve(bearerToken);
    via = 'bearer';
  }
  if (!resolved) throw ApiError.unauthorized();

  if (via === 'cookie' && cookieToken && opts.mutation) {
    const binding = { sessionId: resolved.sessionId, accessToken: cookieToken };
    if (!csrfTokenValid(opts.secret, binding, { cookie: credentials.csrfCookie, header: credentials.csrfHeader })) {
      throw ApiError.forbidden('missing or invalid CSRF token');
    }
  }
  return { ...resolved, via };
}

/** The must-change-password gate (CONTRACT §3.1): only procedures that allow it serve such a user. */
export function requirePasswordChanged(actor: Actor, allowPendingPasswordChange: boolean): void {
  if (actor.mustChangePassword && !allowPendingPasswordChange) throw ApiError.forbidden('password change required');
}

export function requireRole(actor: Actor, roles: readonly Role[]): void {
  if (!roles.includes(actor.role)) throw ApiError.forbidden();
}
