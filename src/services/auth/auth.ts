// The authentication operations: first-run setup, login, logout, refresh, password change, sessions.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor, Context } from '../../context/index.ts';
import { sqlRows, sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { findUserById, findUserByUsername, insertUser, orgRolesOf, type UserRow } from './accounts.ts';
import { clearSessionCookies, setSessionCookies } from './cookies.ts';
import { beginLoginAttempt, recordLoginSuccess } from './loginThrottle.ts';
import { assertPasswordPolicy, dummyVerify, hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { issueSession, reissueTokens, revokeByToken, revokeSession as revokeSessionById, revokeUserSessions, rotateSession, type IssuedSession } from './sessions.ts';
import { usernameKey } from './usernames.ts';

const INVALID_LOGIN = 'invalid username or password';

export async function userInfo(em: EntityManager, user: UserRow) {
  return {
    id: user.id,
    username: user.username,
    role: user.role,
    must_change_password: user.must_change_password,
    ...(await orgRolesOf(em, user.id)),
  };
}

async function sessionResponse(ctx: Context, user: UserRow, issued: IssuedSession) {
  setSessionCookies(ctx.response, ctx.deps.config, issued);
  return {
    session_id: issued.sessionId,
    expires_in: issued.expiresIn,
    refresh_expires_in: issued.refreshExpiresIn,
    must_change_password: user.must_change_password,
    user: await userInfo(ctx.em, user),
  };
}

// Once a CEO exists one always does (the CEO cannot be deleted or demoted), so a service asks only until then.
const setupDone = new WeakSet<Context['deps']>();

async function ceoExists(ctx: Context): Promise<boolean> {
  if (setupDone.has(ctx.deps)) return true;
  const exists = (await sqlRows(ctx.em, `select 1 from users where role = 'ceo' limit 1`)).length > 0;
  if (exists) setupDone.add(ctx.deps);
  return exists;
}

/**
 * Sessions created by a login may be committed without waiting for the WAL flush: an operating-system
 * crash can at worst lose a just-issued session (its owner signs in again), never half of one. That wait
 * was most of a login's database time. Revocations keep full durability.
 */
async function relaxedCommit(tx: EntityManager): Promise<void> {
  await sqlRun(tx, 'set local synchronous_commit = off');
}

/** First-run setup: creates the CEO and signs them in; exactly one concurrent caller wins (users_one_ceo). */
export async function setup(ctx: Context, input: { username: string; password: string }) {
  if (await ceoExists(ctx)) throw ApiError.conflict('first-run setup has already been done');
  const client = { ip: ctx.ip, userAgent: ctx.userAgent };
  const { user, issued } = await ctx.em
    .transactional(async (tx) => {
      const user = await insertUser(tx, ctx.deps, { ...input, role: 'ceo', mustChangePassword: false });
      return { user, issued: await issueSession(tx, ctx.deps, user.id, client) };
    })
    .catch((error: unknown) => {
      // A concurrent setup with the same name loses on the username index before the one-CEO index: still 4000.
      if (error instanceof ApiError && (error.errorCode === 4000 || error.errorCode === 4001)) throw ApiError.conflict('first-run setup has already been done');
      throw error;
    });
  return sessionResponse(ctx, user, issued);
}

export async function login(ctx: Context, input: { username: string; password: string }) {
  if (!(await ceoExists(ctx))) throw ApiError.conflict('first-run setup has not been done');
  const key = usernameKey(input.username);
  // Counted as a failure until it succeeds.
  await beginLoginAttempt(ctx.deps, key, ctx.ip);
  const user = await findUserByUsername(ctx.em, input.username);
  if (!user) {
    // Same work and same answer as a wrong password, so the two cannot be told apart.
    await dummyVerify(input.password);
    throw ApiError.unauthorized(INVALID_LOGIN);
  }
  if (!(await verifyPassword(user.password_hash, input.password))) throw ApiError.unauthorized(INVALID_LOGIN);
  await recordLoginSuccess(ctx.deps, key, ctx.ip);
  const issued = await ctx.em.transactional(async (tx) => {
    await relaxedCommit(tx);
    if (needsRehash(user.password_hash)) {
      await sqlRun(tx, 'update users set password_hash = ? where id = ?', [await hashPassword(input.password), user.id]);
    }
    return issueSession(tx, ctx.deps, user.id, { ip: ctx.ip, userAgent: ctx.userAgent });
  });
  return sessionResponse(ctx, user, issued);
}

/** Ends the presented session, whatever state it is in, and clears the cookies; always succeeds. */
export async function logout(ctx: Context): Promise<void> {
  const { cookieToken, bearerToken } = ctx.credentials;
  for (const token of [cookieToken, bearerToken]) if (token) await revokeByToken(ctx.em, ctx.deps, token);
  clearSessionCookies(ctx.response, ctx.deps.config);
  ctx.response.setHeader('Clear-Site-Data', '"cookies"');
}

export async function refresh(ctx: Context) {
  const token = ctx.credentials.refreshToken;
  if (!token) throw ApiError.unauthorized('missing refresh token');
  const issued = await rotateSession(ctx.em, ctx.deps, token);
  const user = await findUserById(ctx.em, issued.userId);
  if (!user) throw ApiError.sessionRevoked();
  return sessionResponse(ctx, user, issued);
}

/** The signed-in user, straight from the session lookup that authenticated this request (no extra query). */
export function me(actor: Actor) {
  return {
    id: actor.userId,
    username: actor.username,
    role: actor.role,
    must_change_password: actor.mustChangePassword,
    org_roles: actor.orgRoles,
    scoped_departments: actor.scopedDepartments,
  };
}

/** Checks the current password, sets the new one, ends every other session and rotates this one. */
export async function changePassword(ctx: Context, actor: Actor, input: { current_password: string; new_password: string }) {
  const user = await findUserById(ctx.em, actor.userId);
  if (!user) throw ApiError.sessionRevoked();
  if (!(await verifyPassword(user.password_hash, input.current_password))) throw ApiError.validation('current password is incorrect');
  if (input.new_password === input.current_password) throw ApiError.validation('new password must differ from the current one');
  assertPasswordPolicy(input.new_password, user.username);
  const passwordHash = await hashPassword(input.new_password);
  const { updated, issued } = await ctx.em.transactional(async (tx) => {
    const [updated] = await sqlRows<UserRow>(
      tx,
      'update users set password_hash = ?, must_change_password = false, updated_at = ? where id = ? returning *',
      [passwordHash, ctx.deps.clock.now(), actor.userId],
    );
    if (!updated) throw ApiError.sessionRevoked();
    await revokeUserSessions(tx, ctx.deps, actor.userId, 'password_change', actor.sessionId);
    return { updated, issued: await reissueTokens(tx, ctx.deps, actor.sessionId) };
  });
  setSessionCookies(ctx.response, ctx.deps.config, issued);
  return userInfo(ctx.em, updated);
}

type SessionListRow = {
  id: string;
  user_id: string;
  username: string | null;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Date;
  last_active_at: Date;
  expires_at: Date;
};

/** Live sessions (not revoked, still refreshable), newest first; `all` is the CEO's view of everyone's. */
export async function listSessions(ctx: Context, actor: Actor, scope: 'own' | 'all') {
  if (scope === 'all' && actor.role !== 'ceo') throw ApiError.forbidden('only the CEO may list every session');
  const rows = await sqlRows<SessionListRow>(
    ctx.em,
    `select s.id, s.user_id, u.username, s.ip_address, s.user_agent, s.created_at, s.last_active_at, s.expires_at
       from sessions s left join users u on u.id = s.user_id
      where s.revoked_at is null and s.refresh_expires_at > ? ${scope === 'own' ? 'and s.user_id = ?' : ''}
      order by s.created_at desc, s.id desc`,
    scope === 'own' ? [ctx.deps.clock.now(), actor.userId] : [ctx.deps.clock.now()],
  );
  return rows.map((r) => ({
    session_id: r.id,
    user_id: r.user_id,
    username: r.username ?? '',
    ip_address: r.ip_address,
    user_agent: r.user_agent,
    created_at: new Date(r.created_at).toISOString(),
    last_active_at: new Date(r.last_active_at).toISOString(),
    expires_at: new Date(r.expires_at).toISOString(),
    is_current: r.id === actor.sessionId,
  }));
}

/** Revokes a live session: one's own, or anyone's for the CEO; others' sessions look absent (no enumeration). */
export async function revokeSession(ctx: Context, actor: Actor, sessionId: string): Promise<void> {
  const [row] = await sqlRows<{ user_id: string }>(ctx.em, 'select user_id from sessions where id = ? and revoked_at is null and refresh_expires_at > ?', [
    sessionId,
    ctx.deps.clock.now(),
  ]);
  if (!row || (row.user_id !== actor.userId && actor.role !== 'ceo')) throw ApiError.notFound('session not found');
  await revokeSessionById(ctx.em, ctx.deps, sessionId, 'revoked');
}
