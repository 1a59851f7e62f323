// Authentication (a session's token by cookie or bearer, or an API key by bearer; CSRF for cookie mutations), the API-key scope check, the must-change-password and two-factor gates and role checks.
import { ApiError } from '../../errors.ts';
import { csrfTokenValid } from './csrf.ts';
import type { Role } from '../../contracts/roles.ts';
import type { ResolvedSession } from './sessions.ts';
import type { Actor, ApiKeyActor, Credentials } from '../../contracts/actor.ts';
import type { Scope } from '../../contracts/apiKeys.ts';
import { isApiKeyShaped } from '../apiKeys/secrets.ts';

export { ROLES, type Role } from '../../contracts/roles.ts';

/** How each credential is looked up; each reaches the database only when called. */
export type Resolvers = {
  session: (accessToken: string) => Promise<ResolvedSession>;
  apiKey: (key: string) => Promise<ApiKeyActor>;
};

/**
 * The one place credentials become the request's actor, whichever they are (CONTRACT §3.2, §3.5): the cookie
 * first, then the bearer token, which is an API key when it has a key's shape and a session's access token
 * otherwise. A key counts only as a bearer token: in the `session` cookie it is looked up as a session token
 * (and found by none), and a query string is never read. CSRF is checked for cookie-authenticated mutations
 * only: the token must be the one issued, under `secret`, for the session and access token of the cookie.
 */
export async function authenticate(credentials: Credentials, resolve: Resolvers, opts: { mutation: boolean; secret: Buffer }): Promise<Actor> {
  const { cookieToken, bearerToken } = credentials;
  // No credential at all: answer without touching the database.
  if (!cookieToken && !bearerToken) throw ApiError.unauthorized();

  let resolved: ResolvedSession | undefined;
  let via: 'cookie' | 'bearer' = 'cookie';
  if (cookieToken) {
    try {
      resolved = await resolve.session(cookieToken);
    } catch (error) {
      // A stale cookie must not shadow a valid bearer token (CONTRACT §3.2).
      if (!bearerToken) throw error;
    }
  }
  if (!resolved && bearerToken) {
    if (isApiKeyShaped(bearerToken)) return resolve.apiKey(bearerToken);
    resolved = await resolve.session(bearerToken);
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

/** What an operation declares for API keys: the scope it needs, `unscoped` when any key may call it, nothing when no key may. */
export type KeyAccess = Scope | 'unscoped' | undefined;

export const NOT_AVAILABLE_TO_API_KEYS = 'not available to API keys';

/**
 * The scope check of CONTRACT §3.5, before the role check and before the addressed resource is looked up: a
 * key never mints keys or changes accounts, and reaches only what its scopes name. Sessions pass unchecked.
 */
export function requireScope(actor: Actor, access: KeyAccess): void {
  if (!actor.apiKey || access === 'unscoped') return;
  if (access === undefined) throw ApiError.forbidden(NOT_AVAILABLE_TO_API_KEYS);
  if (!actor.apiKey.scopes.includes(access)) throw ApiError.forbidden(`the API key lacks the scope ${access}`);
}

/** The must-change-password gate (CONTRACT §3.1): only procedures that allow it serve such a user's sessions; it does not concern keys (§3.5). */
export function requirePasswordChanged(actor: Actor, allowPendingPasswordChange: boolean): void {
  if (actor.via !== 'api_key' && actor.mustChangePassword && !allowPendingPasswordChange) throw ApiError.forbidden('password change required');
}

export const MFA_REQUIRED = 'two-factor authentication required';

/**
 * The MFA_REQUIRED_ROLES gate (CONTRACT §3.6), right after the password-change gate: a person of such a role
 * signed in without TOTP on reaches only the procedures that allow it (their own two-factor operations, `me`,
 * password change; logout needs no sign-in). Keys and service accounts are not affected: a program has no
 * phone, and a key is no way to sign in.
 */
export function requireMfaEnrolled(actor: Actor, requiredRoles: readonly Role[], allowPendingMfaEnrollment: boolean): void {
  if (actor.via === 'api_key' || actor.kind === 'service' || actor.mfaEnabled || allowPendingMfaEnrollment) return;
  if (requiredRoles.includes(actor.role)) throw ApiError.forbidden(MFA_REQUIRED);
}

export function requireRole(actor: Actor, roles: readonly Role[]): void {
  if (!roles.includes(actor.role)) throw ApiError.forbidden();
}

/** The session of an operation that works on the caller's own session; an API key has none. */
export function sessionOf(actor: Actor): string {
  if (actor.sessionId === null) throw ApiError.forbidden(NOT_AVAILABLE_TO_API_KEYS);
  return actor.sessionId;
}
