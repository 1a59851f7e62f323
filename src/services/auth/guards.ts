// Authentication (cookie or bearer, CSRF for cookie mutations, the must-change-password gate) and role checks.
import type { Actor, Context } from '../../context/index.ts';
import { ApiError } from '../../errors.ts';
import { resolveSession, type ResolvedSession } from './sessions.ts';
import { safeEqual } from './tokens.ts';

import type { Role } from './roles.ts';

export { ROLES, type Role } from './roles.ts';

export async function authenticate(ctx: Context, opts: { mutation: boolean; allowPendingPasswordChange: boolean }): Promise<Actor> {
  if (ctx.actor) return ctx.actor;
  const { cookieToken, bearerToken } = ctx.credentials;
  // No credential at all: answer without touching the database.
  if (!cookieToken && !bearerToken) throw ApiError.unauthorized();

  let resolved: ResolvedSession | undefined;
  let via: Actor['via'] = 'cookie';
  if (cookieToken) {
    try {
      resolved = await resolveSession(ctx.em, ctx.deps, cookieToken);
    } catch (error) {
      // A stale cookie must not shadow a valid bearer token (CONTRACT §3.2).
      if (!bearerToken) throw error;
    }
  }
  if (!resolved && bearerToken) {
    resolved = await resolveSession(ctx.em, ctx.deps, bearerToken);
    via = 'bearer';
  }
  if (!resolved) throw ApiError.unauthorized();

  if (via === 'cookie' && opts.mutation) {
    const { csrfCookie, csrfHeader } = ctx.credentials;
    if (!csrfCookie || !csrfHeader || !safeEqual(csrfCookie, csrfHeader)) throw ApiError.forbidden('missing or invalid CSRF token');
  }
  ctx.trace.userId = resolved.userId;
  if (resolved.mustChangePassword && !opts.allowPendingPasswordChange) throw ApiError.forbidden('password change required');
  return { ...resolved, via };
}

export function requireRole(actor: Actor, roles: readonly Role[]): void {
  if (!roles.includes(actor.role)) throw ApiError.forbidden();
}
