// The authentication operations: first-run setup, login, logout, refresh, password change, sessions.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { ApiError, toApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import type { CookieSessionResponse, SessionResponse, UserInfoResponse } from '../../contracts/auth.ts';
import { acceptLoginCode, INVALID_CODE } from '../mfa/mfa.ts';
import { summariseGrants } from '../users/grants.ts';
import * as users from '../users/store.ts';
import { toUserResponse } from '../users/users.ts';
import { createAccount } from './accounts.ts';
import { withCsrfToken } from './csrf.ts';
import { sessionOf } from './guards.ts';
import { beginLoginAttempt, recordLoginSuccess, refundLoginAttempt, type LoginThrottle } from './loginThrottle.ts';
import { assertPasswordPolicy, dummyVerify, hashPassword, needsRehash, temporaryPasswordExpired, verifyPassword } from './passwords.ts';
import {
  issueSession,
  reissueTokens,
  revokeHeldSession,
  revokeSession as revokeSessionById,
  revokeUserSessions,
  rotateSession,
  type ClientInfo,
  type IssuedSession,
  type SessionSettings,
} from './sessions.ts';
import * as store from './store.ts';
import { isCrossSite } from './requestSite.ts';
import { usernameKey } from './usernameKeys.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { Actor, RequestSite } from '../../contracts/actor.ts';
import { MAX_AUDIT_USERNAME_LENGTH, type LoginFailureReason } from '../../contracts/audit.ts';

const INVALID_LOGIN = 'invalid username or password';

/**
 * Remembers that first-run setup is done. Once a CEO exists one always does (the CEO cannot be deleted or
 * demoted), so a service asks the database only until then. One per running service (createService).
 */
export type SetupLatch = { done: boolean };

export function createSetupLatch(): SetupLatch {
  return { done: false };
}

/** A session's tokens with the CSRF token bound to them: what the transport sets as the three cookies. */
export type SessionCookies = IssuedSession & { csrfToken: string };
/** What an operation that issues tokens hands back: the tokens, for the transport to set as cookies, and the response body. */
export type WithTokens<Response> = { tokens: SessionCookies; response: Response };
export type SignIn = WithTokens<CookieSessionResponse>;

/** `secret` signs the CSRF token of every session issued (CONTRACT §3.2 rev. 2). */
type Sessions = { em: EntityManager; clock: Clock; config: SessionSettings; secret: Buffer };

/** The one mapping to UserInfoResponse, from a stored user (with its grants summarised) or the request's actor. */
function toUserInfo(user: Pick<Actor, 'username' | 'role' | 'kind' | 'mustChangePassword' | 'mfaEnabled' | 'orgRoles' | 'scopedDepartments'> & { id: string }): UserInfoResponse {
  return {
    id: user.id,
    username: user.username,
    role: user.role,
    kind: user.kind,
    must_change_password: user.mustChangePassword,
    mfa_enabled: user.mfaEnabled,
    org_roles: user.orgRoles,
    scoped_departments: user.scopedDepartments,
  };
}

function storedUserInfo(user: users.UserWithGrants): UserInfoResponse {
  return toUserInfo({ ...user, ...summariseGrants(user.grants) });
}

function signIn(secret: Buffer, user: users.UserWithGrants, issued: IssuedSession): SignIn {
  const tokens = withCsrfToken(secret, issued);
  return {
    tokens,
    response: {
      session_id: tokens.sessionId,
      expires_in: tokens.expiresIn,
      refresh_expires_in: tokens.refreshExpiresIn,
      must_change_password: user.mustChangePassword,
      user: storedUserInfo(user),
    },
  };
}

function toSessionResponse(session: store.LiveSession, currentSessionId: string | null): SessionResponse {
  return {
    session_id: session.id,
    user_id: session.userId,
    username: session.username ?? '',
    ip_address: session.ipAddress,
    user_agent: session.userAgent,
    created_at: session.createdAt.toISOString(),
    last_active_at: session.lastActiveAt.toISOString(),
    expires_at: session.expiresAt.toISOString(),
    is_current: session.id === currentSessionId,
  };
}

async function setupDone(em: EntityManager, latch: SetupLatch): Promise<boolean> {
  if (!latch.done) latch.done = await users.ceoExists(em);
  return latch.done;
}

/** First-run setup: creates the CEO and signs them in; exactly one concurrent caller wins (users_one_ceo). */
export async function setup(
  { em, clock, config, secret, setupLatch }: Sessions & { setupLatch: SetupLatch },
  input: { username: string; password: string; client: ClientInfo },
): Promise<SignIn> {
  if (await setupDone(em, setupLatch)) throw ApiError.conflict('first-run setup has already been done');
  const { user, tokens } = await em
    .transactional(async (tx) => {
      const user = await createAccount({ em: tx, clock }, { ...input, role: 'ceo', mustChangePassword: false });
      // The CEO is a user created like any other (nobody can be listening yet, but a later `since` replays it).
      await recordEvent(tx, { type: 'user.created', actor: user.username, at: user.createdAt, data: toUserResponse({ ...user, grants: [] }) });
      const tokens = await issueSession({ em: tx, clock, config }, user.id, input.client);
      const data = { user_id: user.id, username: user.username, session_id: tokens.sessionId };
      await recordEvent(tx, { type: 'auth.setup', actor: user.username, at: user.createdAt, target: { type: 'user', id: user.id }, data });
      return { user, tokens };
    })
    .catch((error: unknown) => {
      // A concurrent setup with the same name loses on the username index before the one-CEO index: still 4000.
      const mapped = toApiError(error);
      if (mapped.errorCode === 4000 || mapped.errorCode === 4001) throw ApiError.conflict('first-run setup has already been done');
      throw error;
    });
  return signIn(secret, { ...user, grants: [] }, tokens);
}

/** The one-time code was refused inside the sign-in's transaction: thrown to roll it back. */
class CodeRefused extends Error {
  override name = 'CodeRefused';
}

/** What a login reads besides the sessions': whether setup is done, the throttle, and how long temporary passwords last. */
type LoginDeps = Sessions & { config: Pick<Config, 'tempPasswordTtlS'>; setupLatch: SetupLatch; loginThrottle: LoginThrottle };

export async function login(
  { em, clock, config, secret, setupLatch, loginThrottle }: LoginDeps,
  input: { username: string; password: string; otp?: string | undefined; client: ClientInfo },
): Promise<SignIn> {
  if (!(await setupDone(em, setupLatch))) throw ApiError.conflict('first-run setup has not been done');
  const key = usernameKey(input.username);
  // Counted as a failure until it succeeds.
  await beginLoginAttempt(loginThrottle, key, input.client.ip);
  // The TOTP key comes in the same read (CONTRACT §3.6): a code costs no round trip besides using it up.
  const user = await users.findLoginUser(em, key);
  // A service account has no password and signs in nowhere (CONTRACT §3.5): like an unknown user, it gets the
  // same work and the same answer as a wrong password, so none of the three can be told apart.
  if (!user || user.kind === 'service' || user.passwordHash === null) {
    await dummyVerify(input.password);
    await recordLoginFailure({ em, clock }, input, user?.id ?? null, user ? 'service_account' : 'unknown_user');
    throw ApiError.unauthorized(INVALID_LOGIN);
  }
  const passwordHash = user.passwordHash;
  if (!(await verifyPassword(passwordHash, input.password))) {
    await recordLoginFailure({ em, clock }, input, user.id, 'wrong_password');
    throw ApiError.unauthorized(INVALID_LOGIN);
  }
  // Told only to whoever proved the password, so the answer says nothing about an account to anyone else;
  // the attempt stays counted as a failure, as it signs nobody in.
  if (temporaryPasswordExpired(user, clock.now(), config.tempPasswordTtlS)) {
    await recordLoginFailure({ em, clock }, input, user.id, 'temporary_password_expired');
    throw ApiError.unauthorized('temporary password has expired');
  }
  // Only once the password is proved (CONTRACT §3.6), so these answers tell nothing to whoever does not know it.
  const otp = input.otp;
  if (user.mfaEnabled && otp === undefined) {
    await refundLoginAttempt(loginThrottle, key, input.client.ip);
    await recordLoginFailure({ em, clock }, input, user.id, 'one_time_code_required');
    throw ApiError.unauthorized('one-time code required');
  }
  const tokens = await em
    .transactional(async (tx) => {
      // Locks the user's row first, as every change of a user's two-factor state does, so the two cannot deadlock.
      const issued = await issueSession({ em: tx, clock, config }, user.id, input.client, { relaxCommitDurability: true });
      // The code is used up in the session's own transaction: one commit for both; a refused one rolls the session back.
      if (user.mfaEnabled && (otp === undefined || !(await acceptLoginCode({ em: tx, clock, secret }, user, otp)))) throw new CodeRefused();
      if (needsRehash(passwordHash)) await users.replacePasswordHash(tx, user.id, await hashPassword(input.password));
      const data = { session_id: issued.sessionId, user_agent: input.client.userAgent };
      await recordEvent(tx, { type: 'auth.login_succeeded', actor: user.username, at: clock.now(), target: { type: 'user', id: user.id }, data });
      return issued;
    })
    .catch(async (error: unknown) => {
      if (!(error instanceof CodeRefused)) throw error;
      // A wrong code stays counted as a failed login: codes are guessed no faster than passwords.
      await recordLoginFailure({ em, clock }, input, user.id, 'invalid_one_time_code');
      throw ApiError.unauthorized(INVALID_CODE);
    });
  await recordLoginSuccess(loginThrottle, key, input.client.ip);
  return signIn(secret, user, tokens);
}

/**
 * A refused login in the audit log (CONTRACT §4.13), in a transaction of its own that commits although the
 * request fails: the name as sent (cut to 128 characters; no actor, as nobody signed in), never the password.
 */
async function recordLoginFailure(
  { em, clock }: { em: EntityManager; clock: Clock },
  input: { username: string; client: ClientInfo },
  userId: string | null,
  reason: LoginFailureReason,
): Promise<void> {
  const data = { username: input.username.slice(0, MAX_AUDIT_USERNAME_LENGTH), reason, user_agent: input.client.userAgent };
  await em.transactional((tx) => recordEvent(tx, { type: 'auth.login_failed', actor: null, at: clock.now(), target: userId === null ? null : { type: 'user', id: userId }, data }));
}

/**
 * Ends the session of whatever the client still holds: its access tokens (cookie, bearer; valid or expired),
 * or else its refresh token. Unknown tokens, or none, are not an error: logout always succeeds, except that a
 * request carrying the session cookies from another site changes nothing and is 403/1001 (CONTRACT §3.7):
 * the cookies are SameSite=Strict, but a page of a sibling site, or one whose Origin is null, must not end a
 * session either. Bearer tokens are not sent by a browser on its own, so a logout by bearer alone passes.
 */
export async function logout(
  { em, clock, config }: { em: EntityManager; clock: Clock; config: Pick<Config, 'publicUrl' | 'corsOrigins'> },
  held: { accessTokens: readonly (string | undefined)[]; refreshToken: string | undefined; byCookie: boolean; site: RequestSite | undefined },
): Promise<void> {
  if (held.byCookie && isCrossSite(held.site, [config.publicUrl, ...config.corsOrigins])) throw ApiError.forbidden('logout from another site is refused');
  await revokeHeldSession({ em, clock }, held);
}

export async function refresh({ em, clock, config, secret }: Sessions, refreshToken: string | undefined): Promise<SignIn> {
  if (!refreshToken) throw ApiError.unauthorized('missing refresh token');
  const tokens = await rotateSession({ em, clock, config }, refreshToken);
  const user = await users.findUserWithGrants(em, tokens.userId);
  if (!user) throw ApiError.sessionRevoked();
  return signIn(secret, user, tokens);
}

/** The signed-in user, straight from the session lookup that authenticated this request (no extra query). */
export function me(actor: Actor): UserInfoResponse {
  const info = toUserInfo({ ...actor, id: actor.userId });
  // The key a request was made with (CONTRACT §3.5); sessions have no such member.
  if (actor.apiKey) info.api_key = { id: actor.apiKey.id, name: actor.apiKey.name, prefix: actor.apiKey.prefix, scopes: actor.apiKey.scopes };
  return info;
}

/**
 * Checks the current password, sets the new one, ends every other session and rotates this one. A wrong
 * current password is a failed login for the throttle (CONTRACT §3.7): a stolen session is no way to guess
 * the password faster than the login form allows, and guesses here and there share one count.
 */
export async function changePassword(
  { em, clock, config, secret, actor, loginThrottle }: Sessions & { actor: Actor; loginThrottle: LoginThrottle },
  input: { current_password: string; new_password: string; client: ClientInfo },
): Promise<WithTokens<UserInfoResponse>> {
  // A password change rotates the caller's session; an API key has none (its tier refuses keys before this).
  const sessionId = sessionOf(actor);
  const current = await users.findUser(em, actor.userId);
  if (!current) throw ApiError.sessionRevoked();
  // Counted before the check, as a login is, so concurrent guesses cannot all pass it.
  await beginLoginAttempt(loginThrottle, current.usernameKey, input.client.ip);
  if (current.passwordHash === null || !(await verifyPassword(current.passwordHash, input.current_password))) throw ApiError.validation('current password is incorrect');
  await recordLoginSuccess(loginThrottle, current.usernameKey, input.client.ip);
  if (input.new_password === input.current_password) throw ApiError.validation('new password must differ from the current one');
  assertPasswordPolicy(input.new_password, current.username);
  const passwordHash = await hashPassword(input.new_password);
  const { tokens, user } = await em.transactional(async (tx) => {
    const now = clock.now();
    // Under the user's lock: whether this change clears the initial-password flag is read where it is written.
    if (!(await users.lockUser(tx, actor.userId))) throw ApiError.sessionRevoked();
    const wasInitial = (await users.findUser(tx, actor.userId))?.mustChangePassword === true;
    if (!(await users.setPassword(tx, actor.userId, passwordHash, now))) throw ApiError.sessionRevoked();
    const user = await users.findUserWithGrants(tx, actor.userId);
    if (!user) throw ApiError.sessionRevoked();
    // must_change_password is part of UserResponse and decides what the user may read (docs/events.md).
    if (wasInitial) await recordEvent(tx, { type: 'user.updated', actor: actor.username, at: now, data: toUserResponse(user) });
    const ended = await revokeUserSessions({ em: tx, clock }, actor.userId, 'password_changed', { username: actor.username }, sessionId);
    await recordEvent(tx, { type: 'auth.password_changed', actor: actor.username, at: now, target: { type: 'user', id: actor.userId }, data: { sessions_revoked: ended } });
    return { tokens: await reissueTokens({ em: tx, clock, config }, sessionId), user };
  });
  return { tokens: withCsrfToken(secret, tokens), response: storedUserInfo(user) };
}

/** Live sessions (not revoked, still refreshable), newest first; `all` is the CEO's view of everyone's. */
export async function listSessions({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }, scope: 'own' | 'all'): Promise<SessionResponse[]> {
  if (scope === 'all' && actor.role !== 'ceo') throw ApiError.forbidden('only the CEO may list every session');
  const sessions = await store.liveSessions(em, clock.now(), scope === 'own' ? actor.userId : null);
  return sessions.map((s) => toSessionResponse(s, actor.sessionId));
}

/** Revokes a live session: one's own, or anyone's for the CEO; others' sessions look absent (no enumeration). */
export async function revokeSession({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }, sessionId: string): Promise<void> {
  const owner = await store.findLiveSessionOwner(em, sessionId, clock.now());
  if (owner === undefined || (owner !== actor.userId && actor.role !== 'ceo')) throw ApiError.notFound('session not found');
  await em.transactional((tx) => revokeSessionById({ em: tx, clock }, sessionId, 'revoked', { username: actor.username }));
}
