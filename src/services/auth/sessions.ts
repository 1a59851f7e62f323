// SessionService: issues, resolves, rotates and revokes sessions; lucia runs the lifecycle, this wraps it so it can be swapped.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Lucia, TimeSpan } from 'lucia';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import { summariseGrants } from '../users/grants.ts';
import { lockUser } from '../users/store.ts';
import { MikroOrmSessionAdapter } from './luciaAdapter.ts';
import { recordEvent } from '../../events/record.ts';
import { endSession, endUserSessions, evictSessionsBeyond, type EndedBy, type RevokeReason } from './sessionEnds.ts';
import * as store from './store.ts';
import { newToken, sha256 } from './tokens.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { SessionActor } from '../../contracts/actor.ts';

export type { EndedBy, RevokeReason } from './sessionEnds.ts';

export const ABSOLUTE_SESSION_LIFETIME_S = 30 * 24 * 3600;
const LAST_ACTIVE_RESOLUTION_MS = 60_000;

/** The settings sessions are issued under (CONTRACT §6). */
export type SessionSettings = Pick<Config, 'accessTokenTtl' | 'refreshTokenTtl' | 'maxSessionsPerUser'>;

/** What a sign-in, refresh or password change hands out: the tokens and their lifetimes in seconds (the CSRF token is bound to them, csrf.ts). */
export type IssuedSession = {
  sessionId: string;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  refreshExpiresIn: number;
};

/** Who a token belongs to: the actor of a request, minus how the token was sent. */
export type ResolvedSession = Omit<SessionActor, 'via'>;

export type ClientInfo = { ip: string; userAgent: string | null };

function lucia(adapter: MikroOrmSessionAdapter, accessTokenTtl: number) {
  return new Lucia(adapter, {
    sessionExpiresIn: new TimeSpan(accessTokenTtl, 's'),
    getSessionAttributes: (attributes) => attributes,
    getUserAttributes: (attributes) => attributes,
  });
}

/**
 * Creates a session for `userId`; call inside a transaction (the user row stays locked until it ends).
 * `relaxCommitDurability` (a login) lets that transaction commit without waiting for the WAL flush: an
 * operating-system crash can at worst lose the session just issued (its owner signs in again) and the
 * eviction it made room with, never half of either. That wait was most of a login's database time.
 */
export async function issueSession(
  { em, clock, config }: { em: EntityManager; clock: Clock; config: SessionSettings },
  userId: string,
  client: ClientInfo,
  opts: { relaxCommitDurability?: boolean } = {},
): Promise<IssuedSession> {
  const now = clock.now();
  // Serialises a user's concurrent sign-ins, so the cap holds: each one sees the sessions the others made.
  await lockUser(em, userId, opts);
  // Make room under the per-user cap: the oldest live sessions go first (each with its session.revoked event).
  await evictSessionsBeyond(em, userId, config.maxSessionsPerUser - 1, now);
  const accessToken = newToken(32);
  const refreshToken = newToken(32);
  const sessionId = randomUUID();
  const absoluteExpiresAt = new Date(now.getTime() + ABSOLUTE_SESSION_LIFETIME_S * 1000);
  const refreshExpiresAt = new Date(Math.min(now.getTime() + config.refreshTokenTtl * 1000, absoluteExpiresAt.getTime()));
  await lucia(new MikroOrmSessionAdapter(em, clock), config.accessTokenTtl).createSession(
    userId,
    { publicId: sessionId, lastActiveAt: now, ipAddress: client.ip, userAgent: client.userAgent, refreshExpiresAt, absoluteExpiresAt, refreshTokenHash: sha256(refreshToken) },
    { sessionId: accessToken },
  );
  return issued(sessionId, accessToken, refreshToken, now, new Date(now.getTime() + config.accessTokenTtl * 1000), refreshExpiresAt);
}

/** Resolves an access token; unknown or expired → 401/1000, revoked → 401/1002. */
export async function resolveSession(
  { em, clock, config }: { em: EntityManager; clock: Clock; config: Pick<Config, 'accessTokenTtl'> },
  accessToken: string,
): Promise<ResolvedSession> {
  const adapter = new MikroOrmSessionAdapter(em, clock);
  const { session, user } = await lucia(adapter, config.accessTokenTtl).validateSession(accessToken);
  const now = clock.now();
  if (!session || !user) {
    const row = adapter.lastLookup;
    if (row?.revokedAt && row.expiresAt.getTime() > now.getTime()) throw ApiError.sessionRevoked();
    throw ApiError.unauthorized('invalid or expired credentials');
  }
  if (now.getTime() - session.lastActiveAt.getTime() > LAST_ACTIVE_RESOLUTION_MS) {
    // At most one write a minute per session, never one per request.
    await store.touchSession(em, session.publicId, now);
  }
  const { orgRoles, scopedDepartments } = summariseGrants(user.grants);
  return {
    sessionId: session.publicId,
    userId: user.id,
    username: user.username,
    role: user.role,
    // Only signing in with a password issues a session, and a service account has none (users_kind_password_check):
    // a session's user is a person, and a user's kind never changes.
    kind: 'human',
    mustChangePassword: user.mustChangePassword,
    mfaEnabled: user.mfaEnabled,
    orgRoles,
    scopedDepartments,
  };
}

/**
 * Rotates both tokens of the session a refresh token belongs to, under a row lock. A refresh token that was
 * already used is a replay: the whole session is revoked, and that revocation is committed before the 1002.
 */
export async function rotateSession(
  { em, clock, config }: { em: EntityManager; clock: Clock; config: SessionSettings },
  refreshToken: string,
): Promise<IssuedSession & { userId: string }> {
  const outcome = await em.transactional(async (tx) => {
    const now = clock.now();
    const refresh = await store.lockRefreshToken(tx, sha256(refreshToken));
    if (!refresh) return { kind: 'unknown' as const };
    const session = await store.lockSession(tx, refresh.sessionId);
    if (!session) return { kind: 'unknown' as const };
    if (refresh.usedAt !== null) {
      // Nobody can tell who replayed the token: the system ends the session (actor null).
      await endSession(tx, session.id, 'refresh_replayed', { username: null }, now);
      return { kind: 'replay' as const };
    }
    if (session.revokedAt !== null) return { kind: 'revoked' as const };
    if (refresh.expiresAt <= now || session.absoluteExpiresAt <= now) return { kind: 'unknown' as const };

    await store.markRefreshTokenUsed(tx, sha256(refreshToken), now);
    const issued = await replaceTokens(tx, config, session.id, session.absoluteExpiresAt, now);
    return { kind: 'rotated' as const, issued: { ...issued, userId: session.userId } };
  });
  switch (outcome.kind) {
    case 'rotated':
      return outcome.issued;
    case 'replay':
    case 'revoked':
      throw ApiError.sessionRevoked();
    default:
      throw ApiError.unauthorized('invalid or expired refresh token');
  }
}

/** Revokes one session by its public id, recording its session.revoked event; returns whether a live one was revoked. Call inside a transaction. */
export async function revokeSession({ em, clock }: { em: EntityManager; clock: Clock }, sessionId: string, reason: RevokeReason, by: EndedBy): Promise<boolean> {
  return (await endSession(em, sessionId, reason, by, clock.now())) !== undefined;
}

/** Revokes every live session of a user, optionally keeping one (the caller's own), one event each. Call inside a transaction. */
export async function revokeUserSessions(
  { em, clock }: { em: EntityManager; clock: Clock },
  userId: string,
  reason: RevokeReason,
  by: EndedBy,
  keepSessionId?: string,
): Promise<number> {
  return endUserSessions(em, userId, reason, by, clock.now(), keepSessionId);
}

/**
 * Logout (CONTRACT §3.3 rev. 2): revokes the session of each access token that is still a session's current
 * one — valid, expired or already revoked — or, when none is, the session of the refresh token, used or
 * not (a browser drops its access cookie after an hour but keeps the refresh cookie for days). Unknown
 * tokens are ignored.
 */
export async function revokeHeldSession(
  { em, clock }: { em: EntityManager; clock: Clock },
  held: { accessTokens: readonly (string | undefined)[]; refreshToken: string | undefined },
): Promise<void> {
  const sessionIds = new Set<string>();
  for (const token of held.accessTokens) {
    const id = token ? await store.findSessionIdByTokenHash(em, sha256(token)) : undefined;
    if (id !== undefined) sessionIds.add(id);
  }
  if (sessionIds.size === 0 && held.refreshToken) {
    // Holding a used refresh token proves no less than replaying it at /auth/refresh, which revokes the session too.
    const id = await store.findSessionIdByRefreshTokenHash(em, sha256(held.refreshToken));
    if (id !== undefined) sessionIds.add(id);
  }
  if (sessionIds.size === 0) return;
  // Not lucia's invalidateSession: the adapter's deleteSession is also lucia's expiry hook, which must not revoke.
  await em.transactional(async (tx) => {
    for (const id of sessionIds) {
      const now = clock.now();
      const ended = await endSession(tx, id, 'logout', 'owner', now);
      // A logout that ends nothing (the session was already over) changes nothing, so it records nothing.
      if (ended) await recordEvent(tx, { type: 'auth.logout', actor: ended.username, at: now, target: { type: 'session', id: ended.id }, data: { session_id: ended.id } });
    }
  });
}

/**
 * Gives an existing session new tokens while keeping its id (after a password change); its earlier
 * refresh tokens are dropped, so presenting one is simply unknown (1000).
 */
export async function reissueTokens(
  { em, clock, config }: { em: EntityManager; clock: Clock; config: SessionSettings },
  sessionId: string,
): Promise<IssuedSession> {
  const session = await store.lockSession(em, sessionId);
  if (!session) throw ApiError.unauthorized();
  await store.deleteUnusedRefreshTokens(em, sessionId);
  return replaceTokens(em, config, sessionId, session.absoluteExpiresAt, clock.now());
}

/** New access and refresh tokens for a locked session, never past its absolute lifetime. */
async function replaceTokens(em: EntityManager, config: SessionSettings, sessionId: string, absoluteExpiresAt: Date, now: Date): Promise<IssuedSession> {
  const absolute = absoluteExpiresAt.getTime();
  const accessToken = newToken(32);
  const refreshToken = newToken(32);
  const expiresAt = new Date(Math.min(now.getTime() + config.accessTokenTtl * 1000, absolute));
  const refreshExpiresAt = new Date(Math.min(now.getTime() + config.refreshTokenTtl * 1000, absolute));
  await store.setSessionToken(em, sessionId, { tokenHash: sha256(accessToken), expiresAt, refreshExpiresAt, lastActiveAt: now });
  await store.insertRefreshToken(em, { tokenHash: sha256(refreshToken), sessionId, createdAt: now, expiresAt: refreshExpiresAt });
  return issued(sessionId, accessToken, refreshToken, now, expiresAt, refreshExpiresAt);
}

function issued(sessionId: string, accessToken: string, refreshToken: string, now: Date, expiresAt: Date, refreshExpiresAt: Date): IssuedSession {
  return {
    sessionId,
    accessToken,
    refreshToken,
    expiresIn: Math.round((expiresAt.getTime() - now.getTime()) / 1000),
    refreshExpiresIn: Math.round((refreshExpiresAt.getTime() - now.getTime()) / 1000),
  };
}
