// SessionService: issues, resolves, rotates and revokes sessions; lucia runs the lifecycle, this wraps it so it can be swapped.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Lucia, TimeSpan } from 'lucia';
import type { Actor } from '../../context/index.ts';
import type { Deps } from '../../context/deps.ts';
import { sqlRows, sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { MikroOrmSessionAdapter } from './luciaAdapter.ts';
import { isRole } from './roles.ts';
import { newToken, sha256 } from './tokens.ts';

export const ABSOLUTE_SESSION_LIFETIME_S = 30 * 24 * 3600;
const LAST_ACTIVE_RESOLUTION_MS = 60_000;

export type IssuedSession = {
  sessionId: string;
  accessToken: string;
  refreshToken: string;
  csrfToken: string;
  expiresIn: number;
  refreshExpiresIn: number;
};

/** Who a token belongs to: the actor of a request, minus how the token was sent. */
export type ResolvedSession = Omit<Actor, 'via'>;

export type ClientInfo = { ip: string; userAgent: string | null };

export type RevokeReason = 'logout' | 'revoked' | 'evicted' | 'password_change' | 'user_deleted' | 'refresh_reuse';

function lucia(em: EntityManager, deps: Deps, adapter = new MikroOrmSessionAdapter(em)) {
  return new Lucia(adapter, {
    sessionExpiresIn: new TimeSpan(deps.config.accessTokenTtl, 's'),
    getSessionAttributes: (attributes) => attributes,
    getUserAttributes: (attributes) => attributes,
  });
}

/** Creates a session for `userId`; call inside a transaction (the user row stays locked until it ends). */
export async function issueSession(em: EntityManager, deps: Deps, userId: string, client: ClientInfo): Promise<IssuedSession> {
  const { config } = deps;
  const now = deps.clock.now();
  // Serialises a user's concurrent sign-ins, so the cap holds: each one sees the sessions the others made.
  await sqlRows(em, 'select id from users where id = ? for update', [userId]);
  // Make room under the per-user cap: the oldest live sessions go first.
  await sqlRun(
    em,
    `update sessions set revoked_at = ?, revoked_reason = 'evicted'
      where id in (select id from sessions where user_id = ? and revoked_at is null and refresh_expires_at > ?
                   order by created_at desc, id desc offset ?)`,
    [now, userId, now, config.maxSessionsPerUser - 1],
  );
  const accessToken = newToken(32);
  const refreshToken = newToken(32);
  const sessionId = randomUUID();
  const absoluteExpiresAt = new Date(now.getTime() + ABSOLUTE_SESSION_LIFETIME_S * 1000);
  const refreshExpiresAt = new Date(Math.min(now.getTime() + config.refreshTokenTtl * 1000, absoluteExpiresAt.getTime()));
  await lucia(em, deps).createSession(
    userId,
    {
      public_id: sessionId,
      last_active_at: now,
      ip_address: client.ip,
      user_agent: client.userAgent,
      refresh_expires_at: refreshExpiresAt,
      absolute_expires_at: absoluteExpiresAt,
    },
    { sessionId: accessToken },
  );
  await insertRefreshToken(em, sessionId, refreshToken, now, refreshExpiresAt);
  return issued(sessionId, accessToken, refreshToken, now, new Date(now.getTime() + config.accessTokenTtl * 1000), refreshExpiresAt);
}

/** Resolves an access token; unknown or expired → 401/1000, revoked → 401/1002. */
export async function resolveSession(em: EntityManager, deps: Deps, accessToken: string): Promise<ResolvedSession> {
  const adapter = new MikroOrmSessionAdapter(em);
  const { session, user } = await lucia(em, deps, adapter).validateSession(accessToken);
  if (!session || !user || !isRole(user.role)) {
    const row = adapter.lastLookup;
    if (row?.revoked_at && new Date(row.expires_at).getTime() > deps.clock.now().getTime()) throw ApiError.sessionRevoked();
    throw ApiError.unauthorized('invalid or expired credentials');
  }
  const now = deps.clock.now();
  if (now.getTime() - session.last_active_at.getTime() > LAST_ACTIVE_RESOLUTION_MS) {
    // At most one write a minute per session, never one per request.
    await sqlRun(em, 'update sessions set last_active_at = ? where id = ?', [now, session.public_id]);
  }
  return {
    sessionId: session.public_id,
    userId: user.id,
    username: user.username,
    role: user.role,
    mustChangePassword: user.must_change_password,
    orgRoles: user.org_roles,
    scopedDepartments: user.scoped_departments,
  };
}

type RefreshRow = { session_id: string; expires_at: Date; used_at: Date | null };
type SessionState = { id: string; user_id: string; revoked_at: Date | null; absolute_expires_at: Date };

/**
 * Rotates both tokens of the session a refresh token belongs to, under a row lock. A refresh token that was
 * already used is a replay: the whole session is revoked, and that revocation is committed before the 1002.
 */
export async function rotateSession(em: EntityManager, deps: Deps, refreshToken: string): Promise<IssuedSession & { userId: string }> {
  const outcome = await em.transactional(async (tx) => {
    const now = deps.clock.now();
    const [refresh] = await sqlRows<RefreshRow>(tx, 'select session_id, expires_at, used_at from refresh_tokens where token_hash = ? for update', [
      sha256(refreshToken),
    ]);
    if (!refresh) return { kind: 'unknown' as const };
    const [session] = await sqlRows<SessionState>(tx, 'select id, user_id, revoked_at, absolute_expires_at from sessions where id = ? for update', [
      refresh.session_id,
    ]);
    if (!session) return { kind: 'unknown' as const };
    if (refresh.used_at !== null) {
      await revokeSessionRow(tx, session.id, 'refresh_reuse', now);
      return { kind: 'replay' as const };
    }
    if (session.revoked_at !== null) return { kind: 'revoked' as const };
    if (new Date(refresh.expires_at) <= now || new Date(session.absolute_expires_at) <= now) return { kind: 'unknown' as const };

    await sqlRun(tx, 'update refresh_tokens set used_at = ? where token_hash = ?', [now, sha256(refreshToken)]);
    const issued = await replaceTokens(tx, deps, session.id, new Date(session.absolute_expires_at), now);
    return { kind: 'rotated' as const, issued: { ...issued, userId: session.user_id } };
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

async function insertRefreshToken(em: EntityManager, sessionId: string, token: string, now: Date, expiresAt: Date): Promise<void> {
  await sqlRun(em, 'insert into refresh_tokens (token_hash, session_id, created_at, expires_at) values (?, ?, ?, ?)', [sha256(token), sessionId, now, expiresAt]);
}

async function revokeSessionRow(em: EntityManager, sessionId: string, reason: RevokeReason, now: Date): Promise<number> {
  return sqlRun(em, 'update sessions set revoked_at = ?, revoked_reason = ? where id = ? and revoked_at is null', [now, reason, sessionId]);
}

/** Revokes one session by its public id; returns whether a live one was revoked. */
export async function revokeSession(em: EntityManager, deps: Deps, sessionId: string, reason: RevokeReason): Promise<boolean> {
  return (await revokeSessionRow(em, sessionId, reason, deps.clock.now())) > 0;
}

/** Revokes every live session of a user, optionally keeping one (the caller's own). */
export async function revokeUserSessions(em: EntityManager, deps: Deps, userId: string, reason: RevokeReason, keepSessionId?: string): Promise<number> {
  return sqlRun(em, 'update sessions set revoked_at = ?, revoked_reason = ? where user_id = ? and revoked_at is null and id <> ?', [
    deps.clock.now(),
    reason,
    userId,
    keepSessionId ?? '',
  ]);
}

/** Revokes the session an access token belongs to (logout); unknown tokens are ignored. */
export async function revokeByToken(em: EntityManager, deps: Deps, accessToken: string): Promise<void> {
  // Not lucia's invalidateSession: the adapter's deleteSession is also lucia's expiry hook, which must not revoke.
  await sqlRun(em, `update sessions set revoked_at = ?, revoked_reason = 'logout' where token_hash = ? and revoked_at is null`, [
    deps.clock.now(),
    sha256(accessToken),
  ]);
}

/**
 * Gives an existing session new tokens while keeping its id (after a password change); its earlier
 * refresh tokens are dropped, so presenting one is simply unknown (1000).
 */
export async function reissueTokens(em: EntityManager, deps: Deps, sessionId: string): Promise<IssuedSession> {
  const [session] = await sqlRows<{ absolute_expires_at: Date }>(em, 'select absolute_expires_at from sessions where id = ? for update', [sessionId]);
  if (!session) throw ApiError.unauthorized();
  await sqlRun(em, 'delete from refresh_tokens where session_id = ? and used_at is null', [sessionId]);
  return replaceTokens(em, deps, sessionId, new Date(session.absolute_expires_at), deps.clock.now());
}

/** New access and refresh tokens for a locked session, never past its absolute lifetime. */
async function replaceTokens(em: EntityManager, deps: Deps, sessionId: string, absoluteExpiresAt: Date, now: Date): Promise<IssuedSession> {
  const absolute = absoluteExpiresAt.getTime();
  const accessToken = newToken(32);
  const refreshToken = newToken(32);
  const expiresAt = new Date(Math.min(now.getTime() + deps.config.accessTokenTtl * 1000, absolute));
  const refreshExpiresAt = new Date(Math.min(now.getTime() + deps.config.refreshTokenTtl * 1000, absolute));
  await sqlRun(em, 'update sessions set token_hash = ?, expires_at = ?, refresh_expires_at = ?, last_active_at = ? where id = ?', [
    sha256(accessToken),
    expiresAt,
    refreshExpiresAt,
    now,
    sessionId,
  ]);
  await insertRefreshToken(em, sessionId, refreshToken, now, refreshExpiresAt);
  return issued(sessionId, accessToken, refreshToken, now, expiresAt, refreshExpiresAt);
}

/** What a client gets for new tokens: the tokens, a fresh CSRF token, and their lifetimes in seconds. */
function issued(sessionId: string, accessToken: string, refreshToken: string, now: Date, expiresAt: Date, refreshExpiresAt: Date): IssuedSession {
  return {
    sessionId,
    accessToken,
    refreshToken,
    csrfToken: newToken(32),
    expiresIn: Math.round((expiresAt.getTime() - now.getTime()) / 1000),
    refreshExpiresIn: Math.round((refreshExpiresAt.getTime() - now.getTime()) / 1000),
  };
}
